// Building RFC 7386 JSON merge patches: the smallest patch that turns `current` into
// `desired`. Objects are compared key by key regardless of key order (the API server returns
// custom resources with sorted keys); arrays and scalars are replaced whole; a key present in
// `current` but absent from `desired` becomes null (delete).

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** A JSON-clean copy: undefined members dropped, Dates as ISO strings. */
export function toJson(v: unknown): JsonValue | undefined {
  return v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as JsonValue);
}

/** Deep equality of JSON values, insensitive to object key order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

/** The merge patch from `current` to `desired`; undefined when they are equal. */
export function mergePatchDiff(current: unknown, desired: unknown): JsonValue | undefined {
  const cur = toJson(current);
  const des = toJson(desired);
  return diff(cur, des);
}

function diff(cur: JsonValue | undefined, des: JsonValue | undefined): JsonValue | undefined {
  if (des === undefined) return cur === undefined ? undefined : null;
  if (isPlainObject(cur) && isPlainObject(des)) {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(des)) {
      const d = diff(cur[k], v);
      if (d !== undefined) out[k] = d;
    }
    for (const k of Object.keys(cur)) if (!(k in des)) out[k] = null;
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (jsonEqual(cur, des)) return undefined;
  // A null inside a replaced object would read as "delete" to the server: nulls never occur in
  // what the operator writes, so a whole replacement is safe.
  return des;
}
