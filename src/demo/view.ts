// The demo's terminal view: a screen redrawn about once a second on a TTY, plain lines
// otherwise. Pure rendering of a snapshot; the runner gathers the snapshot.
import type { EmulatorState } from "../emulator/index.js";
import type { CallResult } from "./traffic.js";

export interface CardView {
  provider: string;
  label: string;
  /** The serving engine: "ollama" loads on demand; any other serves its one model, always warm. */
  engine: string;
  state: EmulatorState;
  /** A fixed-model engine's KV-cache share in use (0..1), from its /metrics; absent = unknown. */
  kvCacheUsage?: number;
}

export interface Totals {
  calls: number;
  ok: number;
  cold: number;
  warm: number;
  evictions: number;
  byProvider: Record<string, number>;
  refusals: Record<string, number>;
  latencySumMs: number;
}

export function emptyTotals(): Totals {
  return { calls: 0, ok: 0, cold: 0, warm: 0, evictions: 0, byProvider: {}, refusals: {}, latencySumMs: 0 };
}

export function addResult(t: Totals, r: CallResult): void {
  t.calls++;
  if (r.status === 200 && !r.reason) {
    t.ok++;
    t.latencySumMs += r.latencyMs;
    if (r.cold) t.cold++;
    else t.warm++;
    t.evictions += r.evicted.length;
    t.byProvider[r.provider] = (t.byProvider[r.provider] ?? 0) + 1;
  } else {
    t.refusals[r.reason || `http-${r.status}`] = (t.refusals[r.reason || `http-${r.status}`] ?? 0) + 1;
  }
}

const GIB = 1024;
const BAR = 40;
const MODEL_MARKS = ["#", "=", "+", "%", "@"];

function gib(mib: number): string {
  return (mib / GIB).toFixed(1);
}

/** "[###====~~~.....]": resident models (one mark each), loads in flight (~), free (.). */
export function vramBar(state: EmulatorState, marks: Map<string, string>): string {
  const cells: string[] = [];
  for (const m of state.models) {
    let mark = marks.get(m.name);
    if (!mark) {
      mark = MODEL_MARKS[marks.size % MODEL_MARKS.length]!;
      marks.set(m.name, mark);
    }
    const n = Math.max(1, Math.round((m.footprintMiB / state.vramMiB) * BAR));
    cells.push((m.state === "loading" ? "~" : mark).repeat(n));
  }
  const used = cells.join("").slice(0, BAR);
  return `[${used}${".".repeat(BAR - used.length)}]`;
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

export function placementLine(r: CallResult): string {
  if (r.status === 200 && !r.reason) {
    const evicted = r.evicted.length ? ` evicted ${r.evicted.join(",")}` : "";
    return `${clock(r.atMs)}  ${r.agent.padEnd(32)} ${r.model.padEnd(10)} → ${r.provider.padEnd(9)} ${
      r.cold ? "cold" : "warm"
    }  wait ${(r.queueWaitMs / 1000).toFixed(1)}s  took ${(r.latencyMs / 1000).toFixed(1)}s${evicted}`;
  }
  return `${clock(r.atMs)}  ${r.agent.padEnd(32)} ${r.requested.padEnd(10)} ✗ stood aside: ${r.reason}`;
}

export function totalsLine(t: Totals): string {
  const by = Object.entries(t.byProvider)
    .sort()
    .map(([p, n]) => `${p} ${n}`)
    .join(", ");
  const refusals = Object.entries(t.refusals)
    .sort()
    .map(([r, n]) => `${r} ${n}`)
    .join(", ");
  const mean = t.ok ? (t.latencySumMs / t.ok / 1000).toFixed(1) : "-";
  return `calls ${t.calls}, ok ${t.ok} (${by || "none"}), cold loads ${t.cold}, warm ${t.warm}, evictions ${
    t.evictions
  }, stand-asides ${refusals || "none"}, mean ${mean} s`;
}

export interface Screen {
  elapsedS: number;
  speed: number;
  seed: number;
  cards: CardView[];
  recent: CallResult[];
  totals: Totals;
  /** The web view's URL; empty without one. */
  webUrl?: string;
}

export function renderScreen(s: Screen, marks: Map<string, string>): string {
  const out: string[] = [];
  const mm = Math.floor(s.elapsedS / 60)
    .toString()
    .padStart(2, "0");
  const ss = Math.floor(s.elapsedS % 60)
    .toString()
    .padStart(2, "0");
  out.push(
    `Kubemoot Scheduler demo — ${mm}:${ss} elapsed, GPUs at ×${s.speed} speed, seed ${s.seed} (Ctrl-C stops)`,
  );
  if (s.webUrl) out.push(`web view: ${s.webUrl}`);
  out.push("");
  for (const c of s.cards) {
    const st = c.state;
    out.push(
      `${c.provider.padEnd(9)} ${`${c.label} (${c.engine})`.padEnd(18)} ${vramBar(st, marks)} ${gib(st.usedMiB).padStart(5)} / ${gib(st.vramMiB)} GiB`,
    );
    if (st.models.length === 0) out.push(`${" ".repeat(20)}(nothing loaded)`);
    for (const m of st.models) {
      const head = `${" ".repeat(20)}${marks.get(m.name) ?? "?"} ${m.name.padEnd(10)} ${gib(m.footprintMiB).padStart(5)} GiB`;
      // A fixed-model engine holds its card from start: what moves is its batch and KV cache.
      out.push(
        c.engine === "ollama"
          ? `${head} ${m.state.padEnd(9)} slots ${m.active}/${st.numParallel}  waiting ${m.waiting}`
          : `${head} always warm  running ${st.activeCount}/${st.numParallel}  waiting ${st.queueDepth}${kv(c, "  KV cache ")}`,
      );
    }
  }
  out.push("", "Last placements");
  for (const r of s.recent) out.push(`  ${placementLine(r)}`);
  if (s.recent.length === 0) out.push("  (none yet)");
  out.push("", totalsLine(s.totals));
  return out.join("\n");
}

function kv(c: CardView, prefix: string): string {
  return c.kvCacheUsage === undefined ? "" : `${prefix}${(c.kvCacheUsage * 100).toFixed(1)}%`;
}

function modelsShort(c: CardView): string {
  const st = c.state;
  if (c.engine !== "ollama")
    return st.models
      .map((m) => `${m.name}(run ${st.activeCount}, wait ${st.queueDepth}${kv(c, ", kv ")})`)
      .join(" ");
  return st.models.map((m) => `${m.name}(${m.state},${m.active}/${st.numParallel})`).join(" ");
}

/** One line for a non-TTY: the cards' state in short. */
export function statusLine(s: Screen): string {
  const cards = s.cards
    .map(
      (c) =>
        `${c.provider}: ${modelsShort(c) || "empty"} ${gib(c.state.usedMiB)}/${gib(c.state.vramMiB)} GiB q${c.state.queueDepth}`,
    )
    .join(" | ");
  return `[${s.elapsedS.toFixed(0)}s] ${cards}`;
}
