// The demand panel of the web view (docs/web-view.md): who waits for what — per model, per crew — and
// why calls were refused over the trend window.
import "./tables.css";
import type { DemandView } from "../../src/web/view-types.js";
import { modelColor } from "./colors.js";
import { count, rate } from "./format.js";

export function Demand(props: { demand: DemandView }) {
  const { models, crews, refusals } = props.demand;
  const byModel = [...models].sort(
    (a, b) => b.waiting - a.waiting || b.recentUse - a.recentUse || a.model.localeCompare(b.model),
  );
  const byCrew = [...crews].sort((a, b) => b.waiting - a.waiting || a.crew.localeCompare(b.crew));
  const byReason = [...refusals].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  // The forecast bar is relative to the busiest model, so that the ranking reads at a glance.
  const top = Math.max(0, ...models.map((m) => m.forecast));
  return (
    <div class="demand">
      <table class="grid-table">
        <thead>
          <tr>
            <th>Model</th>
            <th class="num" title="calls waiting for it now">
              Waiting
            </th>
            <th class="num" title="agents whose threads plan to call it">
              Intents
            </th>
            <th class="num" title="decayed call rate">
              Use
            </th>
            <th>Forecast</th>
          </tr>
        </thead>
        <tbody>
          {byModel.length === 0 && (
            <tr>
              <td colSpan={5} class="empty">
                No demand.
              </td>
            </tr>
          )}
          {byModel.map((m) => (
            <tr key={m.model} data-testid="demand-model-row" data-model={m.model}>
              <td class="ellipsis" title={m.model}>
                <span class="dot" style={{ background: modelColor(m.model) }} />
                {m.model}
              </td>
              <td class={`num${m.waiting > 0 ? " warn-text" : ""}`}>{m.waiting}</td>
              <td class="num">{m.intents}</td>
              <td class="num">{rate(m.recentUse)}</td>
              <td class="forecast">
                <span class="mini-bar">
                  <span class="mini-fill" style={{ width: `${top > 0 ? (m.forecast / top) * 100 : 0}%` }} />
                </span>
                <span class="num">{rate(m.forecast)}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="refusals">
        <span class="refusals-head">Refused</span>
        {byReason.length === 0 && <span class="muted">none in the window</span>}
        {byReason.map((r) => (
          <span key={r.reason} class="refusal">
            <span class="reason">{r.reason}</span>
            <span class="refusal-count" data-testid="refusal-count" data-reason={r.reason}>
              {count(r.count)}
            </span>
          </span>
        ))}
      </div>
      <table class="grid-table">
        <thead>
          <tr>
            <th>Crew</th>
            <th class="num">Waiting</th>
            <th>By band</th>
          </tr>
        </thead>
        <tbody>
          {byCrew.length === 0 && (
            <tr>
              <td colSpan={3} class="empty">
                No crew waits.
              </td>
            </tr>
          )}
          {byCrew.map((c) => (
            <tr key={c.crew} data-testid="demand-crew-row" data-crew={c.crew}>
              <td class="ellipsis" title={c.crew}>
                {c.crew}
              </td>
              <td class={`num${c.waiting > 0 ? " warn-text" : ""}`}>{c.waiting}</td>
              <td class="bands">
                {Object.entries(c.bands)
                  .filter(([, n]) => n > 0)
                  .map(([band, n]) => `${band} ${n}`)
                  .join(" · ") || <span class="muted">—</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
