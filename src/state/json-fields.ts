// Tolerant field readers for JSON written by other programs: a missing or mistyped field takes
// its zero value, unknown fields are ignored (docs/rules/state.md §2).

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

export function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

export function bool(v: unknown): boolean {
  return v === true;
}

export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** `{name: number}` maps; entries whose value is not a finite number are dropped. */
export function numberMap(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isObject(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === "number" && Number.isFinite(x)) out[k] = x;
  return out;
}

/**
 * An instant as epoch ms: a number, a numeric string, or an ISO-8601 string. Undefined when
 * absent or unreadable.
 */
export function instantMs(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v !== "string" || v.trim() === "") return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v);
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}
