// Kubernetes label selectors: matchLabels plus matchExpressions (In, NotIn, Exists,
// DoesNotExist), ANDed; an absent or empty selector selects everything. Compiling validates
// (an invalid selector is a policy error, never a crash) and renders the selector for
// zero-match reasons:
//   matchLabels k=v  → `k: v`          In     → `k: a|b`
//   NotIn            → `k: !a`, `k: !(a|b)`
//   Exists           → `k`              DoesNotExist → `!k`
// Terms are sorted by key (matchLabels before expressions on one key) and values are sorted,
// so the text never depends on how the selector was written.
import { cmp } from "./order.js";
import type { LabelSelector, Labels } from "./types.js";

export const SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;
export type SelectorOperator = (typeof SELECTOR_OPERATORS)[number];

export interface CompiledSelector {
  matches(labels: Labels): boolean;
  /** The label keys the selector names. */
  readonly keys: ReadonlySet<string>;
  /** e.g. `{capability/tool-calling: true, params: 14B|32B}`. */
  readonly text: string;
}

export type SelectorCompilation = { ok: true; selector: CompiledSelector } | { ok: false; error: string };

interface Term {
  key: string;
  /** 0 for matchLabels, 1 for expressions: matchLabels render first on a shared key. */
  rank: number;
  text: string;
  test: (labels: Labels) => boolean;
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a valid label key (`[prefix/]name`), or undefined when it is. */
export function labelKeyError(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `label key "${key}": the prefix must be a DNS subdomain`;
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) {
    return `label key "${key}": the name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric`;
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is. */
export function labelValueError(value: unknown): string | undefined {
  if (typeof value !== "string") return `label value ${JSON.stringify(value)}: must be a string`;
  if (value === "") return undefined;
  if (value.length > 63 || !NAME.test(value)) {
    return `label value "${value}": must be at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric`;
  }
  return undefined;
}

function join(path: string, field: string): string {
  return path ? `${path}.${field}` : field;
}

/** Validates and compiles a selector; `path` prefixes error fields (e.g. `spec.rules[0].require`). */
export function compileSelector(selector: LabelSelector | undefined, path = ""): SelectorCompilation {
  const terms: Term[] = [];
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    const field = join(path, `matchLabels["${key}"]`);
    const err = labelKeyError(key) ?? labelValueError(value);
    if (err) return { ok: false, error: `${field}: ${err}` };
    terms.push({
      key,
      rank: 0,
      text: `${key}: ${value === "" ? '""' : value}`,
      test: (labels) => labels[key] === value,
    });
  }
  const expressions = selector?.matchExpressions ?? [];
  for (let i = 0; i < expressions.length; i++) {
    const expr = expressions[i]!;
    const field = join(path, `matchExpressions[${i}]`);
    const keyErr = typeof expr.key === "string" ? labelKeyError(expr.key) : "key: required";
    if (keyErr) return { ok: false, error: `${field}.key: ${keyErr}` };
    const op = expr.operator;
    if (!(SELECTOR_OPERATORS as readonly string[]).includes(op)) {
      return {
        ok: false,
        error: `${field}.operator: "${String(op)}" is not one of ${SELECTOR_OPERATORS.join(", ")}`,
      };
    }
    const values = expr.values ?? [];
    if (op === "In" || op === "NotIn") {
      if (values.length === 0) return { ok: false, error: `${field}.values: ${op} needs at least one value` };
      for (let j = 0; j < values.length; j++) {
        const err = labelValueError(values[j]);
        if (err) return { ok: false, error: `${field}.values[${j}]: ${err}` };
      }
    } else if (values.length > 0) {
      return { ok: false, error: `${field}.values: ${op} takes no values` };
    }
    terms.push(expressionTerm(expr.key, op as SelectorOperator, values));
  }
  terms.sort((a, b) => cmp(a.key, b.key) || a.rank - b.rank || cmp(a.text, b.text));
  const text = `{${terms.map((t) => t.text).join(", ")}}`;
  return {
    ok: true,
    selector: {
      text,
      keys: new Set(terms.map((t) => t.key)),
      matches: (labels) => terms.every((t) => t.test(labels)),
    },
  };
}

function expressionTerm(key: string, op: SelectorOperator, values: readonly string[]): Term {
  const set = new Set(values);
  const sorted = [...set].sort(cmp).map((v) => (v === "" ? '""' : v));
  const has = (labels: Labels) => Object.hasOwn(labels, key);
  switch (op) {
    case "In":
      return { key, rank: 1, text: `${key}: ${sorted.join("|")}`, test: (l) => has(l) && set.has(l[key]!) };
    case "NotIn": {
      const alt = sorted.length === 1 ? sorted[0]! : `(${sorted.join("|")})`;
      return { key, rank: 1, text: `${key}: !${alt}`, test: (l) => !has(l) || !set.has(l[key]!) };
    }
    case "Exists":
      return { key, rank: 1, text: key, test: has };
    case "DoesNotExist":
      return { key, rank: 1, text: `!${key}`, test: (l) => !has(l) };
  }
}
