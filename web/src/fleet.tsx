// The fleet panel of the web view (docs/web-view.md): one card per provider with its VRAM bar,
// slots and KV-cache use, as the view server's ProviderCard describes it.
import "./fleet.css";
import type { ProviderCard, VramSegment } from "../../src/web/view-types.js";
import { modelColor } from "./colors.js";
import { duration, gib, mib, percent } from "./format.js";

export function Fleet(props: { providers: ProviderCard[]; now: number }) {
  if (props.providers.length === 0) return <p class="empty">No providers known yet.</p>;
  return (
    <div class="fleet">
      {props.providers.map((p) => (
        <Card key={p.name} p={p} now={props.now} />
      ))}
    </div>
  );
}

function state(p: ProviderCard): { text: "ready" | "suspect" | "not ready"; cls: string } {
  // Not answering the probe outranks a sidecar's suspicion; both outrank ready.
  if (!p.ready) return { text: "not ready", cls: "bad" };
  if (p.suspect) return { text: "suspect", cls: "warn" };
  return { text: "ready", cls: "ok" };
}

function Card(props: { p: ProviderCard; now: number }) {
  const { p, now } = props;
  const st = state(p);
  const free = p.vram.filter((s) => s.kind === "free").reduce((a, s) => a + s.mib, 0);
  const probed = p.lastProbedAt ? Date.parse(p.lastProbedAt) : Number.NaN;
  return (
    <article class="card" data-testid="provider-card" data-provider={p.name}>
      <div class="card-head">
        <span class="card-name" title={p.name}>
          {p.name}
        </span>
        {p.label ? (
          <span class="tag" data-testid="provider-label">
            {p.label}
          </span>
        ) : null}
        <span class="tag">{p.engine}</span>
        <span class="probed" title={p.lastProbedAt ? `last probed ${p.lastProbedAt}` : "never probed"}>
          {Number.isFinite(probed) ? `probed ${duration(now - probed)} ago` : "never probed"}
        </span>
        <span class={`badge ${st.cls}`} data-testid="provider-state">
          {st.text}
        </span>
      </div>
      <VramBar p={p} />
      <div class="card-figures">
        {p.totalMiB > 0 ? (
          <>
            <span data-testid="vram-total">
              {mib(p.totalMiB)} total <span class="muted">({gib(p.totalMiB)})</span>
            </span>
            <span class="sep">·</span>
            <span data-testid="vram-free">{mib(free)} free</span>
          </>
        ) : (
          <span class="muted">VRAM unknown</span>
        )}
      </div>
      <Legend segments={p.vram} />
      <dl class="card-facts">
        <dt>loaded</dt>
        <dd title={p.loadedModels.join(", ")}>
          {p.loadedModels.length ? p.loadedModels.join(", ") : <span class="muted">none</span>}
        </dd>
        <dt>slots</dt>
        <dd>
          {p.slots.running}/{p.slots.max} running
          <span class="sep">·</span>
          <span class={p.slots.queued > 0 ? "warn-text" : ""}>{p.slots.queued} queued</span>
          {p.kvCacheUsage !== undefined && (
            <span class="kv" title="KV-cache use">
              <span class="sep">·</span>
              KV
              <span class="kv-bar" data-testid="kv-bar">
                <span class="kv-fill" style={{ width: `${clamp01(p.kvCacheUsage) * 100}%` }} />
              </span>
              {percent(p.kvCacheUsage)}
            </span>
          )}
        </dd>
      </dl>
    </article>
  );
}

function clamp01(f: number): number {
  return Math.min(1, Math.max(0, f));
}

function VramBar(props: { p: ProviderCard }) {
  const segs = props.p.vram;
  // The segments sum to totalMiB when it is known; otherwise they are drawn to their own sum.
  const whole = props.p.totalMiB > 0 ? props.p.totalMiB : segs.reduce((a, s) => a + s.mib, 0);
  return (
    <div class="vram-bar" data-testid="vram-bar" role="img" aria-label={barLabel(segs)}>
      {/* Segments have no identity of their own: keyed by position, like the bar. */}
      {segs.map((s, i) => (
        <span
          key={i}
          class={`seg seg-${s.kind}`}
          data-testid="vram-seg"
          data-kind={s.kind}
          data-model={s.kind === "resident" || s.kind === "loading" ? (s.model ?? "") : undefined}
          data-mib={String(Math.round(s.mib))}
          title={segTitle(s)}
          style={{ width: `${whole > 0 ? (s.mib / whole) * 100 : 0}%`, ...segStyle(s) }}
        >
          {(s.kind === "resident" || s.kind === "loading") && whole > 0 && s.mib / whole > 0.12 && (
            <span class="seg-label">{s.model}</span>
          )}
        </span>
      ))}
    </div>
  );
}

function segStyle(s: VramSegment): Record<string, string> {
  const m = s.model ?? "";
  if (s.kind === "resident") return { background: modelColor(m) };
  if (s.kind === "loading") {
    // Hatched in the model's colour: room that the load will fill.
    return {
      background: `repeating-linear-gradient(135deg, ${modelColor(m, 0.75)} 0 5px, ${modelColor(m, 0.25)} 5px 10px)`,
    };
  }
  return {};
}

function segTitle(s: VramSegment): string {
  const what = s.kind === "resident" || s.kind === "loading" ? `${s.model ?? "?"} (${s.kind})` : s.kind;
  return `${what}: ${mib(s.mib)}`;
}

function barLabel(segs: VramSegment[]): string {
  return segs.map(segTitle).join("; ");
}

function Legend(props: { segments: VramSegment[] }) {
  const shown = props.segments.filter((s) => s.kind !== "free");
  if (shown.length === 0) return null;
  return (
    <ul class="legend">
      {shown.map((s, i) => (
        <li key={i} class={`legend-${s.kind}`}>
          <span class={`swatch seg-${s.kind}`} style={segStyle(s)} />
          <span class="legend-name">
            {s.kind === "reserve" ? "reserve" : s.model}
            {s.kind === "loading" && <span class="muted"> loading</span>}
          </span>
          <span class="legend-mib">{mib(s.mib)}</span>
        </li>
      ))}
    </ul>
  );
}
