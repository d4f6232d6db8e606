// Number, size, time and value formatting for the web view (docs/web-view.md).
// Plain text only: every value the page shows goes through Preact's text nodes, never HTML.

/** Whole MiB without separators ("32605 MiB"), so that the figure reads exactly as the server sent it. */
export function mib(n: number): string {
  return `${Math.round(n)} MiB`;
}

export function gib(n: number): string {
  return `${(n / 1024).toFixed(1)} GiB`;
}

/** Seconds, one decimal below 10 s ("1.2 s", "14 s"). */
export function seconds(s: number): string {
  if (!Number.isFinite(s)) return "—";
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

/** A duration in ms as the tables show ages and leases: "850 ms", "12 s", "3m 05s", "1h 02m". */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const neg = ms < 0;
  const a = Math.abs(ms);
  let out: string;
  if (a < 1000) out = `${Math.round(a)} ms`;
  else if (a < 60_000) out = seconds(a / 1000);
  else if (a < 3_600_000) {
    const m = Math.floor(a / 60_000);
    out = `${m}m ${pad(Math.floor((a % 60_000) / 1000))}s`;
  } else {
    const h = Math.floor(a / 3_600_000);
    out = `${h}h ${pad(Math.floor((a % 3_600_000) / 60_000))}m`;
  }
  return neg ? `-${out}` : out;
}

/** Local wall-clock time, HH:MM:SS. */
export function clock(epochMs: number): string {
  if (!epochMs) return "—";
  const d = new Date(epochMs);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A rate or decayed count: two decimals when small, fewer as it grows. */
export function rate(n: number): string {
  if (!Number.isFinite(n)) return "—";
  if (Number.isInteger(n)) return String(n);
  if (Math.abs(n) < 10) return n.toFixed(2);
  if (Math.abs(n) < 100) return n.toFixed(1);
  return Math.round(n).toString();
}

/** An axis tick: at most two decimals, trailing zeros dropped ("2.5", "10"). */
export function tick(n: number): string {
  return String(Number(n.toFixed(2)));
}

/** Local time of day, HH:MM, for chart axes. */
export function hhmm(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A (weighted) count: whole numbers as they are, otherwise one decimal. */
export function count(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

export function percent(f: number): string {
  return `${Math.round(f * 100)} %`;
}

/** An attribution value (proto JSON) as text: scalars as they are, lists joined, objects as JSON. */
export function value(v: unknown): string {
  if (v === null || v === undefined) return "—";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (Array.isArray(v) && v.length === 0) return "none";
  if (Array.isArray(v) && v.every((x) => typeof x !== "object" || x === null)) return v.join(", ");
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
