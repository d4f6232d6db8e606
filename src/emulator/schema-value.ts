// Deterministic values matching a JSON schema: the emulator's structured output (`format`,
// `response_format`) and tool-call arguments. Covers what agent frameworks generate (pydantic,
// zod, LangChain): objects (every property is filled, so `required` holds), arrays (minItems,
// maxItems, uniqueItems, prefixItems or a list of items), strings (enum, const, minLength, maxLength, and the
// formats date-time, date, time, email, uri, uuid), numbers and integers (minimum, maximum,
// exclusive bounds, multipleOf), booleans, null, type lists, anyOf/oneOf (the first
// alternative that is not null), allOf (merged), and local $ref (#/$defs/…, #/definitions/…).
// Not honoured: `pattern`, `not`, `if`/`then`, `dependentRequired`: a value may fail those.
import type { Rng } from "../prng/index.js";
import { answerToken } from "./tokenizer.js";

type Schema = Record<string, unknown>;
const MAX_DEPTH = 8;

function isSchema(v: unknown): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function resolveRef(ref: string, root: unknown): Schema {
  if (!ref.startsWith("#")) return {};
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    node = isSchema(node) ? node[key] : undefined;
  }
  return isSchema(node) ? node : {};
}

function words(rng: Rng, n: number): string {
  const seed = rng.int(0, 0x7fffffff);
  let s = "";
  for (let i = 0; i < n; i++) s += answerToken(seed, i, n + 1);
  return s;
}

function stringValue(s: Schema, rng: Rng): string {
  const day = rng.int(0, 364);
  const date = new Date(Date.UTC(2025, 0, 1 + day, rng.int(0, 23), rng.int(0, 59), rng.int(0, 59)));
  const word = () => words(rng, 1).toLowerCase();
  let out: string;
  switch (s.format) {
    case "date-time":
      out = date.toISOString().replace(/\.\d{3}Z$/, "Z");
      break;
    case "date":
      out = date.toISOString().slice(0, 10);
      break;
    case "time":
      out = `${date.toISOString().slice(11, 19)}Z`;
      break;
    case "email":
      out = `${word()}@example.com`;
      break;
    case "uri":
    case "url":
      out = `https://example.com/${word()}`;
      break;
    case "uuid": {
      const hex = Array.from({ length: 32 }, () => rng.int(0, 15).toString(16)).join("");
      out = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
      break;
    }
    default:
      out = words(rng, rng.int(1, 3));
  }
  const min = num(s.minLength) ?? 0;
  const max = num(s.maxLength);
  while ([...out].length < min) out += ` ${word()}`;
  if (max !== undefined && [...out].length > max) out = [...out].slice(0, max).join("");
  return out;
}

function numberValue(s: Schema, rng: Rng, integer: boolean): number {
  const exMin = num(s.exclusiveMinimum);
  const exMax = num(s.exclusiveMaximum);
  let lo = num(s.minimum) ?? (exMin !== undefined ? exMin : undefined);
  let hi = num(s.maximum) ?? (exMax !== undefined ? exMax : undefined);
  if (lo === undefined && hi === undefined) [lo, hi] = [0, 100];
  else if (lo === undefined) lo = (hi as number) - 100;
  else if (hi === undefined) hi = lo + 100;
  const mult = num(s.multipleOf);
  if (integer || mult !== undefined) {
    const step = mult ?? 1;
    let first = Math.ceil((lo as number) / step);
    let last = Math.floor((hi as number) / step);
    if (exMin !== undefined && first * step <= exMin) first++;
    if (exMax !== undefined && last * step >= exMax) last--;
    if (last < first) return first * step;
    const k = rng.int(first, last) * step;
    return mult !== undefined && !Number.isInteger(mult) ? Number(k.toFixed(10)) : k;
  }
  // Keep clear of both ends so exclusive bounds hold.
  const v = (lo as number) + ((hi as number) - (lo as number)) * (0.1 + 0.8 * rng.float());
  return Math.round(v * 100) / 100 || v;
}

function arrayValue(s: Schema, rng: Rng, root: unknown, depth: number): unknown[] {
  // 2020-12 tuples (prefixItems) or draft-07 ones (items as a list).
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
  const min = Math.max(num(s.minItems) ?? 0, 0);
  const max = num(s.maxItems);
  // Deep in a recursive schema, arrays shrink to their minimum so the value ends.
  let n = depth >= MAX_DEPTH ? min : Math.max(min, prefix.length, Math.min(2, max ?? 2));
  if (max !== undefined) n = Math.min(n, max);
  const items = isSchema(s.items) ? s.items : {};
  const out: unknown[] = [];
  const seen = new Set<string>();
  for (let tries = 0; out.length < n && tries < n * 8; tries++) {
    const i = out.length;
    const v = valueFor(i < prefix.length ? prefix[i] : items, rng, root, depth + 1);
    const key = JSON.stringify(v);
    if (s.uniqueItems === true && seen.has(key)) continue;
    seen.add(key);
    out.push(v);
  }
  return out;
}

function merge(all: unknown[], root: unknown): Schema {
  const out: Schema = {};
  const props: Schema = {};
  const required: string[] = [];
  for (const part of all) {
    const p = isSchema(part) && typeof part.$ref === "string" ? resolveRef(part.$ref, root) : part;
    if (!isSchema(p)) continue;
    Object.assign(out, p);
    if (isSchema(p.properties)) Object.assign(props, p.properties);
    if (Array.isArray(p.required)) required.push(...(p.required as string[]));
  }
  if (Object.keys(props).length > 0) out.properties = props;
  if (required.length > 0) out.required = required;
  return out;
}

/** A value for `schema` drawn from `rng`; `root` resolves $ref. */
export function valueFor(schema: unknown, rng: Rng, root: unknown = schema, depth = 0): unknown {
  if (!isSchema(schema)) return words(rng, 2);
  let s = schema;
  if (typeof s.$ref === "string") s = { ...resolveRef(s.$ref, root), ...s, $ref: undefined };
  if (Array.isArray(s.allOf)) s = { ...merge(s.allOf, root), ...s, allOf: undefined };
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return rng.pick(s.enum);
  const alternatives = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as
    | unknown[]
    | undefined;
  if (alternatives && alternatives.length > 0) {
    const pick = alternatives.find((a) => !(isSchema(a) && a.type === "null")) ?? alternatives[0];
    return valueFor(pick, rng, root, depth + 1);
  }
  let type = s.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null") ?? "null";
  if (type === undefined) {
    if (isSchema(s.properties)) type = "object";
    else if (s.items !== undefined || s.prefixItems !== undefined) type = "array";
    else type = "string";
  }
  if (depth >= 2 * MAX_DEPTH) {
    if (type === "object") return {};
    if (type === "array") return [];
  }
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const props = isSchema(s.properties) ? s.properties : {};
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      for (const [k, v] of Object.entries(props)) {
        // Deep in a recursive schema, only what is required.
        if (depth >= MAX_DEPTH && !required.has(k)) continue;
        out[k] = valueFor(v, rng, root, depth + 1);
      }
      return out;
    }
    case "array":
      return arrayValue(s, rng, root, depth);
    case "integer":
      return numberValue(s, rng, true);
    case "number":
      return numberValue(s, rng, false);
    case "boolean":
      return rng.chance(0.5);
    case "null":
      return null;
    default:
      return stringValue(s, rng);
  }
}
