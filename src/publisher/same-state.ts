// Whether a probe changed a provider's published state (docs/rules/binding.md §8 "Provider
// publisher", docs/rules/state.md §2.1): the publisher writes on change plus a slow heartbeat,
// so a probe whose value equals the last published one in every field but `lastProbedAt` is
// not written. Pure; values are compared structurally, as a reader would read them:
// - maps (footprints, context lengths) by key and value, whatever their key order;
// - `loadedModels` and `singleSlotModels` as sets: every reader treats them so (includes, a
//   sorted set of residents, the proxy's catalog) and the publisher dedupes them;
// - any other array in order; an absent field equals one set to undefined (JSON drops both).
import type { ProviderState } from "../core/index.js";

/** The fields compared as sets of strings. */
const SET_FIELDS: ReadonlySet<string> = new Set(["loadedModels", "singleSlotModels"]);

/** The field a probe always moves, whether or not anything else changed. */
const PROBE_TIME = "lastProbedAt";

/** True when `a` and `b` differ in `lastProbedAt` at most. */
export function sameButProbeTime(a: ProviderState, b: ProviderState): boolean {
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) {
    if (key === PROBE_TIME) continue;
    const same = SET_FIELDS.has(key) ? sameSet(x[key], y[key]) : sameValue(x[key], y[key]);
    if (!same) return false;
  }
  return true;
}

function sameSet(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) return sameValue(a, b);
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size !== sb.size) return false;
  for (const v of sa) if (!sb.has(v)) return false;
  return true;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameValue(v, b[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) {
    if (!sameValue(x[key], y[key])) return false;
  }
  return true;
}
