// A small typed reader over one parsed document: each method returns the value or undefined
// and records an issue naming the field (the same shape as the operator's manifest issues,
// so the CLI formats both alike).
import { parseDuration as parseConfigDuration } from "../duration/index.js";
import { describe, isObject, type Json, type ManifestIssue } from "../operator/manifests/index.js";

export { describe, isObject, type Json };

export interface DocRef {
  file: string;
  document: number;
  kind?: string;
  object?: string;
}

export class Reader {
  constructor(
    readonly doc: DocRef,
    readonly issues: ManifestIssue[],
  ) {}

  fail(field: string, message: string): undefined {
    this.issues.push({ ...this.doc, field, message });
    return undefined;
  }

  object(parent: Json | undefined, key: string, path: string, required = false): Json | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return required ? this.fail(path, "required") : undefined;
    if (!isObject(v)) return this.fail(path, `expected an object, got ${describe(v)}`);
    return v;
  }

  string(parent: Json | undefined, key: string, path: string, required = false): string | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return required ? this.fail(path, "required") : undefined;
    if (typeof v !== "string") return this.fail(path, `expected a string, got ${describe(v)}`);
    if (required && v === "") return this.fail(path, "must not be empty");
    return v;
  }

  integer(parent: Json | undefined, key: string, path: string, min: number, max: number): number | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
      return this.fail(path, `expected an integer in ${min}..${max}, got ${describe(v)}`);
    }
    return v;
  }

  boolean(parent: Json | undefined, key: string, path: string): boolean | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "boolean") return this.fail(path, `expected true or false, got ${describe(v)}`);
    return v;
  }

  list(parent: Json | undefined, key: string, path: string): unknown[] | undefined {
    const v = parent?.[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) return this.fail(path, `expected a list, got ${describe(v)}`);
    return v;
  }

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

/**
 * A duration in milliseconds ("30s", "5m", "1h30m", "250ms"), or undefined when the text is not
 * one: the operator's own parser (src/duration), so that the dry run and the operator accept
 * the same TopologySource durations.
 */
export function parseDuration(text: string): number | undefined {
  try {
    return parseConfigDuration(text, "duration", { minMs: 0 });
  } catch {
    return undefined;
  }
}
