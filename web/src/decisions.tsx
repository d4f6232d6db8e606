// The decisions stream of the web view (docs/web-view.md): placements, refusals and releases as the
// sidecars publish them, newest first; a row opens that call's story.
import "./decisions.css";
import type { DecisionOption, DecisionRecord } from "../../src/web/view-types.js";
import { modelColor } from "./colors.js";
import { clock, seconds } from "./format.js";

export function Decisions(props: {
  decisions: DecisionRecord[];
  selected: string | null;
  onOpen: (id: string) => void;
}) {
  if (props.decisions.length === 0) return <p class="empty">No decisions yet.</p>;
  return (
    <ol class="decisions">
      {props.decisions.map((d) => (
        <Row
          key={`${d.id}|${d.kind}|${d.at}`}
          d={d}
          selected={d.id === props.selected}
          onOpen={props.onOpen}
        />
      ))}
    </ol>
  );
}

/** "rtx-5090 warm 1.2 s · rtx-4090 cold 9.8 s": what the time policy weighed, best first. */
export function optionsText(options: DecisionOption[], model: string): string {
  // An option for another model than the call asked for (a substitute) names it.
  return options
    .map((o) => `${o.provider}${o.model !== model ? ` ${o.model}` : ""} ${o.kind} ${seconds(o.seconds)}`)
    .join(" · ");
}

function Row(props: { d: DecisionRecord; selected: boolean; onOpen: (id: string) => void }) {
  const { d } = props;
  return (
    <li
      class={`decision kind-${d.kind}${props.selected ? " selected" : ""}`}
      data-testid="decision-row"
      data-id={d.id}
      data-kind={d.kind}
      data-model={d.model}
      data-provider={d.provider}
    >
      {/* One button per row: keyboard and screen readers reach the story like a click does. */}
      <button
        type="button"
        class="decision-open"
        aria-pressed={props.selected}
        title="Open the call's story"
        onClick={() => props.onOpen(d.id)}
      >
        <span class="d-line">
          <span class="d-time">{clock(d.at)}</span>
          <span class={`badge k-${d.kind}`}>{d.kind}</span>
          <span class="d-model" title={d.model}>
            <span class="dot" style={{ background: modelColor(d.model) }} />
            {d.model}
          </span>
          {d.provider && (
            <>
              <span class="muted">→</span>
              <span class="d-provider">{d.provider}</span>
            </>
          )}
          {d.cold !== undefined && d.kind !== "refused" && (
            <span class={d.cold ? "badge cold" : "badge warm"}>{d.cold ? "cold" : "warm"}</span>
          )}
        </span>
        <span class="d-line d-sub">
          <span class="d-agent" title={`${d.agent} (crew ${d.crew})`}>
            {d.agent}
          </span>
          {d.weight > 1 && <span class="muted">×{d.weight}</span>}
          {d.priority && <span class="tag">{d.priority}</span>}
          {d.queuePosition !== undefined && d.queuePosition > 0 && (
            <span class="muted">queue #{d.queuePosition}</span>
          )}
          {d.evicted && d.evicted.length > 0 && (
            <span class="d-evicted" title={d.evicted.join(", ")}>
              evicted {d.evicted.join(", ")}
            </span>
          )}
          {d.traceId && (
            <span class="d-trace" data-testid="decision-trace" title={`traced: ${d.traceId}`}>
              trace
            </span>
          )}
          {d.waitMs > 0 && (
            <span class="d-wait" title="waited for capacity">
              wait {seconds(d.waitMs / 1000)}
            </span>
          )}
        </span>
        {d.kind === "refused" && (
          <span class="d-line d-reason" data-testid="decision-reason">
            <span class="reason">{d.reason ?? "refused"}</span>
            {d.message && <span class="d-message">{d.message}</span>}
          </span>
        )}
        {d.options && d.options.length > 0 && (
          <span class="d-line d-options" title={`policy ${d.policy}`}>
            {optionsText(d.options, d.model)}
          </span>
        )}
      </button>
    </li>
  );
}
