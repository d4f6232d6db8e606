// The web view's page layout (docs/web-view.md): header with the connection state, fleet across the
// top, tickets and demand, trends, and the decisions stream as the tall right column.
import { useCallback, useState } from "preact/hooks";
import { CallStory } from "./call-story.js";
import { Decisions } from "./decisions.js";
import { Demand } from "./demand.js";
import { Fleet } from "./fleet.js";
import { clock } from "./format.js";
import { Panel } from "./panel.js";
import { type Conn, useNow, useViewState } from "./store.js";
import { Tickets } from "./tickets.js";
import { Trends, TrendWindow, useTrendWindow } from "./trends.js";

const connText: Record<Conn, string> = {
  connecting: "connecting…",
  live: "live",
  reconnecting: "reconnecting…",
};

export function App() {
  const s = useViewState();
  const now = useNow(s);
  const [minutes, setMinutes] = useTrendWindow();
  const [story, setStory] = useState<string | null>(null);
  const close = useCallback(() => setStory(null), []);
  const revision = story === null ? 0 : s.decisions.filter((d) => d.id === story).length;

  return (
    <div class="page">
      <header class="top">
        <h1>Kubemoot Scheduler</h1>
        <span class="muted">live view</span>
        <span class="spacer" />
        {s.store && (
          <span class={`badge ${s.store.available ? "plain" : "bad"}`} title="ticket store">
            {s.store.kind} store{s.store.available ? "" : " unavailable"}
          </span>
        )}
        <span class="mono muted" title="server time">
          {s.serverAt ? clock(now) : "—"}
        </span>
        <span class={`conn conn-${s.conn}`} data-testid="conn-status" role="status">
          <span class="conn-dot" />
          {connText[s.conn]}
        </span>
      </header>
      <main class="layout">
        <div class="left">
          <Panel id="fleet" title="Fleet" note={`${s.providers.length} providers`}>
            <Fleet providers={s.providers} now={now} />
          </Panel>
          <div class="mid">
            <Panel id="tickets" title="Tickets" note={`${s.tickets.length} live`}>
              <Tickets tickets={s.tickets} now={now} />
            </Panel>
            <Panel id="demand" title="Demand">
              <Demand demand={s.demand} />
            </Panel>
          </div>
          <Panel
            id="trends"
            title="Trends"
            note={`${Math.round(s.stepMs / 1000)} s steps`}
            tools={<TrendWindow minutes={minutes} onChange={setMinutes} />}
          >
            <Trends points={s.points} stepMs={s.stepMs} minutes={minutes} />
          </Panel>
        </div>
        <Panel id="decisions" title="Decisions" note={`${s.decisions.length} newest`}>
          <Decisions decisions={s.decisions} selected={story} onOpen={setStory} />
        </Panel>
        {story !== null && <CallStory id={story} revision={revision} traceUrl={s.traceUrl} onClose={close} />}
      </main>
    </div>
  );
}
