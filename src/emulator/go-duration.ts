// Go's time.ParseDuration and Ollama's keep_alive rules, in milliseconds. "Forever" (any
// negative keep_alive) is Infinity.

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3, // U+00B5 micro sign
  μs: 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

export class DurationError extends Error {
  override readonly name = "DurationError";
}

/**
 * Parses a Go duration string ("300ms", "1.5h", "2h45m", "-1s", "0") into milliseconds,
 * with Go's error messages ("time: missing unit in duration \"3600\"").
 */
export function parseGoDuration(input: string): number {
  const quoted = JSON.stringify(input);
  let s = input;
  let sign = 1;
  if (s.startsWith("-") || s.startsWith("+")) {
    if (s[0] === "-") sign = -1;
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw new DurationError(`time: invalid duration ${quoted}`);
  let totalNs = 0;
  while (s !== "") {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s);
    const whole = num?.[1] ?? "";
    const frac = num?.[2];
    if (!num || (whole === "" && (frac === undefined || frac === ""))) {
      throw new DurationError(`time: invalid duration ${quoted}`);
    }
    s = s.slice(num[0].length);
    const unitMatch = /^[^\d.]+/.exec(s);
    if (!unitMatch) throw new DurationError(`time: missing unit in duration ${quoted}`);
    const unit = unitMatch[0];
    const ns = UNIT_NS[unit];
    if (ns === undefined)
      throw new DurationError(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    s = s.slice(unit.length);
    const value = Number(`${whole === "" ? "0" : whole}.${frac ?? "0"}`);
    totalNs += value * ns;
  }
  if (totalNs > 2 ** 63 - 1) throw new DurationError(`time: invalid duration ${quoted}`);
  return (sign * totalNs) / 1e6;
}

/**
 * A request's `keep_alive` as Ollama reads it: a JSON number is seconds, a string a Go
 * duration (a bare "3600" is an error), anything negative means forever (Infinity), and
 * null/absent means "not given" (undefined). Throws DurationError with Ollama's message.
 */
export function parseKeepAlive(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new DurationError("keep_alive: not a finite number");
    return value < 0 ? Number.POSITIVE_INFINITY : value * 1000;
  }
  if (typeof value === "string") {
    const ms = parseGoDuration(value);
    return ms < 0 ? Number.POSITIVE_INFINITY : ms;
  }
  const type = Array.isArray(value)
    ? "[]interface {}"
    : typeof value === "object"
      ? "map[string]interface {}"
      : "bool";
  throw new DurationError(`Unsupported type: '${type}'`);
}

/**
 * OLLAMA_KEEP_ALIVE as the server reads its environment: a Go duration, or else an integer
 * number of seconds; negative means forever. Throws DurationError on anything else.
 */
export function parseKeepAliveSetting(value: string | number): number {
  if (typeof value === "number") return parseKeepAlive(value) as number;
  const s = value.trim();
  try {
    const ms = parseGoDuration(s);
    return ms < 0 ? Number.POSITIVE_INFINITY : ms;
  } catch (err) {
    if (/^[-+]?\d+$/.test(s)) {
      const seconds = Number(s);
      return seconds < 0 ? Number.POSITIVE_INFINITY : seconds * 1000;
    }
    throw err;
  }
}

/** Formats emulated milliseconds for humans and /_emulator/state ("forever" for Infinity). */
export function formatDurationMs(ms: number): string {
  if (ms === Number.POSITIVE_INFINITY) return "forever";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const totalS = ms / 1000;
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = Math.round((totalS % 60) * 1000) / 1000;
  return `${h ? `${h}h` : ""}${m ? `${m}m` : ""}${s || (!h && !m) ? `${s}s` : ""}`;
}
