// Kubernetes-style durations as CRDs write them (metav1.Duration, i.e. Go's
// time.ParseDuration): "30s", "5m", "1h", "1h30m", "1.5h", "250ms". We keep millisecond
// precision, so the sub-millisecond units (ns, us, µs) are refused rather than rounded to zero.
import { invalidArgument, type KubemootError } from "../errors/index.js";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const TERM = /(\d+(?:\.\d*)?|\.\d+)([a-zA-Zµμ]*)/y;
const SUB_MS = new Set(["ns", "us", "µs", "μs"]);

export interface DurationBounds {
  /** Smallest accepted value in ms (default 1: a zero duration is refused). */
  minMs?: number;
}

/** Parses a duration into whole milliseconds; throws InvalidArgument naming `field`. */
export function parseDuration(text: unknown, field: string, bounds: DurationBounds = {}): number {
  const minMs = bounds.minMs ?? 1;
  if (typeof text !== "string")
    throw bad(field, `expected a duration string such as "30s", got ${typeof text}`);
  const s = text.trim();
  if (s === "") throw bad(field, `expected a duration such as "30s" or "5m", got an empty string`);
  if (s.startsWith("-")) throw bad(field, `"${text}" is negative; durations must be positive`);
  let ms = 0;
  let at = s.startsWith("+") ? 1 : 0;
  if (at === s.length) throw bad(field, `"${text}" has no number`);
  while (at < s.length) {
    TERM.lastIndex = at;
    const m = TERM.exec(s);
    if (!m) throw bad(field, `"${text}" is not a duration (expected e.g. "30s", "5m", "1h30m")`);
    const [whole, num, unit] = m;
    if (unit === undefined || unit === "") {
      // Go accepts a bare "0"; any other number needs a unit to mean something.
      if (s === "0") return check(0, text, field, minMs);
      throw bad(field, `"${text}": "${num}" has no unit (use ms, s, m or h)`);
    }
    const factor = UNIT_MS[unit];
    if (factor === undefined) {
      const why = SUB_MS.has(unit) ? "is finer than a millisecond" : "is not a duration unit";
      throw bad(field, `"${text}": unit "${unit}" ${why} (use ms, s, m or h)`);
    }
    ms += Number(num) * factor;
    at += whole!.length;
  }
  return check(Math.round(ms), text, field, minMs);
}

function check(ms: number, text: string, field: string, minMs: number): number {
  if (!Number.isSafeInteger(ms)) throw bad(field, `"${text}" is too large`);
  if (ms < minMs) throw bad(field, `"${text}" is shorter than the minimum of ${formatDuration(minMs)}`);
  return ms;
}

function bad(field: string, message: string): KubemootError {
  return invalidArgument(field, message);
}

/** Milliseconds back to the same notation, for messages: 5400000 → "1h30m", 1500 → "1s500ms". */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let rest = Math.round(ms);
  let out = "";
  for (const [unit, size] of [
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
    ["ms", 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}
