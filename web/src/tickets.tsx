// The tickets panel of the web view (docs/web-view.md): every live ticket, grouped by provider,
// sortable within each group.
import "./tables.css";
import { useState } from "preact/hooks";
import type { TicketRow } from "../../src/web/view-types.js";
import { modelColor } from "./colors.js";
import { duration } from "./format.js";

type Key = "holder" | "model" | "age" | "lease";

const columns: { key: Key | null; label: string; cls?: string; title?: string }[] = [
  { key: "holder", label: "Holder" },
  { key: "model", label: "Model" },
  { key: "age", label: "Age", cls: "num" },
  { key: "lease", label: "Lease", cls: "num", title: "lease left" },
  { key: null, label: "Cold" },
  { key: null, label: "Victims" },
];

function leaseLeft(t: TicketRow, now: number): number {
  // No lease sorts last: it never runs out.
  return t.expiresAt === 0 ? Number.POSITIVE_INFINITY : t.expiresAt - now;
}

function compare(key: Key, now: number): (a: TicketRow, b: TicketRow) => number {
  switch (key) {
    case "holder":
      return (a, b) => a.holder.localeCompare(b.holder) || a.claimedAt - b.claimedAt;
    case "model":
      return (a, b) => a.model.localeCompare(b.model) || a.claimedAt - b.claimedAt;
    case "age":
      return (a, b) => a.claimedAt - b.claimedAt; // Oldest (largest age) first.
    case "lease":
      return (a, b) => leaseLeft(a, now) - leaseLeft(b, now) || a.claimedAt - b.claimedAt;
  }
}

export function Tickets(props: { tickets: TicketRow[]; now: number }) {
  const [sort, setSort] = useState<{ key: Key; desc: boolean }>({ key: "age", desc: false });
  const { now } = props;
  if (props.tickets.length === 0) return <p class="empty">No live tickets.</p>;
  const cmp = compare(sort.key, now);
  const groups = new Map<string, TicketRow[]>();
  for (const t of props.tickets) groups.set(t.provider, [...(groups.get(t.provider) ?? []), t]);
  const providers = [...groups.keys()].sort();
  const click = (key: Key) => setSort((s) => (s.key === key ? { key, desc: !s.desc } : { key, desc: false }));
  return (
    <table class="grid-table tickets">
      <thead>
        <tr>
          {columns.map((c) => (
            <th
              key={c.label}
              class={c.cls}
              title={c.title}
              aria-sort={c.key && c.key === sort.key ? (sort.desc ? "descending" : "ascending") : undefined}
            >
              {c.key ? (
                <button type="button" class="sort" onClick={() => click(c.key as Key)}>
                  {c.label}
                  {c.key === sort.key ? (sort.desc ? " ▾" : " ▴") : ""}
                </button>
              ) : (
                c.label
              )}
            </th>
          ))}
        </tr>
      </thead>
      {providers.map((p) => {
        const rows = [...(groups.get(p) ?? [])].sort((a, b) => (sort.desc ? -cmp(a, b) : cmp(a, b)));
        return (
          <tbody key={p}>
            <tr class="group">
              <th colSpan={columns.length} scope="rowgroup">
                {p} <span class="muted">· {rows.length}</span>
              </th>
            </tr>
            {rows.map((t) => (
              <Row key={t.id} t={t} now={now} />
            ))}
          </tbody>
        );
      })}
    </table>
  );
}

function Row(props: { t: TicketRow; now: number }) {
  const { t, now } = props;
  const left = t.expiresAt === 0 ? null : t.expiresAt - now;
  return (
    <tr data-testid="ticket-row" data-provider={t.provider} data-model={t.model}>
      <td class="ellipsis holder" title={t.holder}>
        {t.holder}
      </td>
      <td class="ellipsis model" title={t.model}>
        <span class="dot" style={{ background: modelColor(t.model) }} />
        {t.model}
      </td>
      <td class="num">{duration(now - t.claimedAt)}</td>
      <td class={`num${left !== null && left < 5000 ? " warn-text" : ""}`}>
        {left === null ? "—" : left <= 0 ? "expired" : duration(left)}
      </td>
      <td>{t.coldLoad ? <span class="badge cold">yes</span> : <span class="muted">no</span>}</td>
      <td class="ellipsis victims" title={t.victims.join(", ")}>
        {t.victims.length ? t.victims.join(", ") : <span class="muted">—</span>}
      </td>
    </tr>
  );
}
