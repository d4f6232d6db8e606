// The call's story in the web view (docs/web-view.md): every record of one call from GET api/calls/<id>,
// a released call's attribution (the Attribute RPC's proto JSON) as a key → value table, and its
// trace id: a link when the server has a trace link template, text to copy otherwise.
import "./call-story.css";
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { traceLink } from "../../src/web/trace-link.js";
import type { DecisionRecord, CallStory as Story } from "../../src/web/view-types.js";
import { optionsText } from "./decisions.js";
import { clock, seconds, value } from "./format.js";

type Load = { state: "loading" } | { state: "error"; message: string } | { state: "ok"; story: Story };

/**
 * `revision` counts the records of this call in the live stream: when a new one arrives (the call
 * was released while its story is open), the story is fetched again.
 */
export function CallStory(props: {
  id: string;
  revision: number;
  /** The trace link template ("" = none). */
  traceUrl: string;
  onClose: () => void;
}) {
  const { id, revision, traceUrl, onClose } = props;
  const [load, setLoad] = useState<Load>({ state: "loading" });

  // revision is only a trigger: a new record of this call fetches the story again.
  useEffect(() => {
    const ctl = new AbortController();
    fetch(`api/calls/${encodeURIComponent(id)}`, {
      signal: ctl.signal,
      headers: { accept: "application/json" },
    })
      .then(async (r) => {
        if (!r.ok)
          throw new Error(r.status === 404 ? "no records of this call (any more)" : `HTTP ${r.status}`);
        const story = (await r.json()) as Story;
        if (!story || !Array.isArray(story.records)) throw new Error("unexpected answer");
        setLoad({ state: "ok", story });
      })
      .catch((e: unknown) => {
        if (!ctl.signal.aborted)
          setLoad({ state: "error", message: e instanceof Error ? e.message : String(e) });
      });
    return () => ctl.abort();
  }, [id, revision]);

  useEffect(() => {
    const esc = (e: KeyboardEvent) => {
      if (e.key === "Escape") onClose();
    };
    window.addEventListener("keydown", esc);
    return () => window.removeEventListener("keydown", esc);
  }, [onClose]);

  return (
    <aside class="story" data-testid="call-story" aria-label={`Call ${id}`}>
      <header class="story-head">
        <h2>
          Call <span class="mono">{id}</span>
        </h2>
        <button
          type="button"
          class="close"
          data-testid="call-story-close"
          onClick={onClose}
          aria-label="Close"
        >
          ✕
        </button>
      </header>
      <div class="story-body">
        {load.state === "loading" && <p class="empty">Loading…</p>}
        {load.state === "error" && <p class="empty">{load.message}</p>}
        {load.state === "ok" &&
          (load.story.records.length === 0 ? (
            <p class="empty">No records.</p>
          ) : (
            load.story.records.map((r) => (
              <StoryRecord key={`${r.kind}|${r.at}|${r.instance}`} r={r} traceUrl={traceUrl} />
            ))
          ))}
      </div>
    </aside>
  );
}

/** The trace id: a link to the trace (a new tab, no referrer) with a template, else selectable text. */
function TraceId(props: { traceId: string; traceUrl: string }) {
  const href = traceLink(props.traceUrl, props.traceId);
  if (href === undefined) {
    return (
      <span class="mono trace-id" data-testid="story-trace" title="the call's W3C trace id">
        {props.traceId}
      </span>
    );
  }
  return (
    <a
      class="mono trace-id"
      data-testid="story-trace"
      href={href}
      target="_blank"
      rel="noopener noreferrer"
      title="open the call's trace"
    >
      {props.traceId}
    </a>
  );
}

function StoryRecord(props: { r: DecisionRecord; traceUrl: string }) {
  const { r } = props;
  const facts: [string, ComponentChildren][] = [
    ["agent", r.agent],
    ["crew", r.crew],
    ["sidecar", r.instance],
    ["model", r.model],
  ];
  if (r.provider) facts.push(["provider", r.engine ? `${r.provider} (${r.engine})` : r.provider]);
  if (r.cold !== undefined) facts.push(["load", r.cold ? "cold" : "warm"]);
  if (r.evicted?.length) facts.push(["evicted", r.evicted.join(", ")]);
  facts.push(["waited", seconds(r.waitMs / 1000)]);
  if (r.priority) facts.push(["priority", r.priority]);
  if (r.queuePosition !== undefined) facts.push(["queue position", String(r.queuePosition)]);
  if (r.bindingRevision !== undefined) facts.push(["thread binding", `revision ${r.bindingRevision}`]);
  facts.push(["policy", r.policy]);
  if (r.options?.length) facts.push(["options", optionsText(r.options, r.model)]);
  if (r.reason) facts.push(["reason", r.reason]);
  if (r.message) facts.push(["message", r.message]);
  if (r.weight !== 1) facts.push(["stands for", `${r.weight} calls`]);
  if (r.traceId) facts.push(["trace", <TraceId traceId={r.traceId} traceUrl={props.traceUrl} />]);
  const attribution = r.attribution ? Object.entries(r.attribution) : [];
  return (
    <section class={`story-record kind-${r.kind}`} data-testid="story-record" data-kind={r.kind}>
      <h3>
        <span class="d-time">{clock(r.at)}</span> <span class={`badge k-${r.kind}`}>{r.kind}</span>
      </h3>
      <dl class="facts">
        {facts.map(([k, v]) => (
          <div key={k} class="fact">
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {r.kind === "released" && attribution.length > 0 && (
        <>
          <h4>Attribution</h4>
          <table class="kv-table">
            <tbody>
              {attribution.map(([k, v]) => (
                <tr key={k} data-testid="story-field" data-key={k}>
                  <th scope="row">{k}</th>
                  <td>{value(v)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
