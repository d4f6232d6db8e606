// Typed reading of one parsed document with the field path tracked: each reader returns the
// value (or undefined) and records an issue naming the field when the value has the wrong
// type or range. One reader for every kind read from manifests (the binder's, the fleet's,
// the topology dry run's); the rules of each kind are its reader's, mirroring chart/crds/.
import type { DocumentRef, ManifestIssue } from "./issues.js";

export type Json = Record<string, unknown>;

export class FieldReader {
  /** `issues` may be shared by the readers of several documents. */
  constructor(
    readonly doc: DocumentRef,
    readonly issues: ManifestIssue[] = [],
  ) {}

  fail(field: string, message: string): undefined {
    this.issues.push({ ...this.doc, field, message });
    return undefined;
  }

  /** A nested object; `required` records an issue when it is absent. */
  object(parent: Json | undefined, key: string, path: string, required = false): Json | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return required ? this.fail(path, "required") : undefined;
    if (!isObject(v)) return this.fail(path, `expected an object, got ${describe(v)}`);
    return v;
  }

  string(
    parent: Json | undefined,
    key: string,
    path: string,
    opts: { required?: boolean; pattern?: RegExp; patternText?: string; oneOf?: readonly string[] } = {},
  ): string | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return opts.required ? this.fail(path, "required") : undefined;
    if (typeof v !== "string") return this.fail(path, `expected a string, got ${describe(v)}`);
    if (opts.required && v === "") return this.fail(path, "must not be empty");
    if (opts.oneOf && !opts.oneOf.includes(v)) {
      return this.fail(path, `expected one of ${opts.oneOf.join(", ")}, got "${v}"`);
    }
    if (opts.pattern && !opts.pattern.test(v)) {
      return this.fail(path, `"${v}" is not ${opts.patternText ?? `matching ${opts.pattern}`}`);
    }
    return v;
  }

  /** An integer ≥ min (default 0) and, when given, ≤ max. */
  integer(
    parent: Json | undefined,
    key: string,
    path: string,
    opts: { required?: boolean; min?: number; max?: number } = {},
  ) {
    const v = parent?.[key];
    const min = opts.min ?? 0;
    const max = opts.max ?? Number.POSITIVE_INFINITY;
    if (v === undefined || v === null) return opts.required ? this.fail(path, "required") : undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
      const range = opts.max === undefined ? `≥ ${min}` : `in ${min}..${opts.max}`;
      return this.fail(path, `expected an integer ${range}, got ${describe(v)}`);
    }
    return v;
  }

  boolean(parent: Json | undefined, key: string, path: string): boolean | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "boolean") return this.fail(path, `expected true or false, got ${describe(v)}`);
    return v;
  }

  /** A list, its items unread; absent gives undefined. */
  list(parent: Json | undefined, key: string, path: string, required = false): unknown[] | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return required ? this.fail(path, "required") : undefined;
    if (!Array.isArray(v)) return this.fail(path, `expected a list, got ${describe(v)}`);
    return v;
  }

  /** An array whose items are read by `item`; absent gives undefined. */
  array<T>(
    parent: Json | undefined,
    key: string,
    path: string,
    item: (value: unknown, path: string) => T | undefined,
    opts: { required?: boolean; minItems?: number } = {},
  ): T[] | undefined {
    const v = this.list(parent, key, path, opts.required);
    if (v === undefined) return undefined;
    if (opts.minItems !== undefined && v.length < opts.minItems) {
      return this.fail(path, `expected at least ${opts.minItems} item(s)`);
    }
    const out: T[] = [];
    v.forEach((x, i) => {
      const r = item(x, `${path}[${i}]`);
      if (r !== undefined) out.push(r);
    });
    return out;
  }

  stringArray(parent: Json | undefined, key: string, path: string, opts: { required?: boolean } = {}) {
    return this.array(
      parent,
      key,
      path,
      (x, p) => (typeof x === "string" ? x : this.fail(p, `expected a string, got ${describe(x)}`)),
      opts,
    );
  }

  /** A map of string to string (labels, qualityBias, matchLabels). */
  stringMap(parent: Json | undefined, key: string, path: string): Record<string, string> | undefined {
    const v = this.object(parent, key, path);
    if (!v) return undefined;
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(v)) {
      if (typeof x !== "string") {
        this.fail(`${path}["${k}"]`, `expected a string, got ${describe(x)} (quote it)`);
        continue;
      }
      out[k] = x;
    }
    return out;
  }
}

export function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return JSON.stringify(v);
  return `${typeof v} ${String(v)}`;
}
