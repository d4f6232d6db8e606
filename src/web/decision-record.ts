// Decision records on the wire (docs/web-view.md "Decision records"): the subject a sidecar
// publishes on, the size cap, and a strict reader. A record never holds prompt text: it is
// built from the decision's names and numbers only, and its free-text fields (a refusal's
// message, an engine's error) are cut short. The reader takes nothing it does not expect, so a
// malformed or oversized message from any publisher is dropped, never shown.
import { isTraceId } from "./trace-link.js";
import type { DecisionOption, DecisionRecord } from "./view-types.js";

/**
 * Records are published on `kubemoot.decisions.<namespace>` (the calling agent's, so that NATS
 * rights per namespace can allow it, docs/deploy.md); the view follows `kubemoot.decisions.>`.
 */
export const DECISIONS_SUBJECT = "kubemoot.decisions";

/** The largest encoded record (bytes); a larger one loses its options and attribution, then is dropped. */
export const MAX_RECORD_BYTES = 4096;

/** Free text in a record (a refusal's message, an engine's error) is cut to this many characters. */
export const MAX_TEXT = 240;

const KINDS = new Set<DecisionRecord["kind"]>(["placed", "refused", "released"]);
const OPTION_KINDS = new Set<DecisionOption["kind"]>(["warm", "cold", "unload", "queue"]);
const MAX_NAME = 253;
const MAX_LIST = 16;

/** The subject of an agent's records: its namespace as one NATS token (`_` without one). */
export function decisionSubject(agent: string): string {
  const slash = agent.indexOf("/");
  const ns = slash > 0 ? agent.slice(0, slash) : "";
  const token = ns.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MAX_NAME) || "_";
  return `${DECISIONS_SUBJECT}.${token}`;
}

export function cutText(s: string): string {
  return s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT - 1)}…`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The record's bytes within MAX_RECORD_BYTES: without options and attribution if need be; undefined if still over. */
export function encodeRecord(r: DecisionRecord): Uint8Array | undefined {
  let bytes = encoder.encode(JSON.stringify(r));
  if (bytes.length <= MAX_RECORD_BYTES) return bytes;
  const { options: _o, attribution: _a, ...lean } = r;
  bytes = encoder.encode(JSON.stringify(lean));
  return bytes.length <= MAX_RECORD_BYTES ? bytes : undefined;
}

type Json = Record<string, unknown>;

function str(v: unknown, max = MAX_NAME): string | undefined {
  return typeof v === "string" && v.length <= max ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function strList(v: unknown): string[] | undefined {
  if (!Array.isArray(v) || v.length > MAX_LIST) return undefined;
  const out: string[] = [];
  for (const x of v) {
    const s = str(x);
    if (s === undefined) return undefined;
    out.push(s);
  }
  return out;
}

function option(v: unknown): DecisionOption | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Json;
  const provider = str(o.provider);
  const model = str(o.model);
  const seconds = num(o.seconds);
  const kind = o.kind as DecisionOption["kind"];
  if (provider === undefined || model === undefined || seconds === undefined || !OPTION_KINDS.has(kind)) {
    return undefined;
  }
  return { provider, model, kind, seconds };
}

/** Only flat string, number and boolean fields, and lists of strings: what Attribute's JSON holds. */
function attribution(v: unknown): Record<string, unknown> | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Json)) {
    if (k.length > 64) return undefined;
    if (typeof x === "string") out[k] = cutText(x);
    else if (typeof x === "number" || typeof x === "boolean") out[k] = x;
    else if (Array.isArray(x)) {
      const l = strList(x);
      if (l === undefined) return undefined;
      out[k] = l;
    } else return undefined;
  }
  return out;
}

/** A record from the wire, or undefined when it is not one (wrong shape, too large, not JSON). */
export function decodeRecord(data: Uint8Array): DecisionRecord | undefined {
  if (data.length > MAX_RECORD_BYTES) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null) return undefined;
  const o = raw as Json;
  const kind = o.kind as DecisionRecord["kind"];
  const id = str(o.id, 128);
  const at = num(o.at);
  const agent = str(o.agent);
  const crew = str(o.crew);
  const instance = str(o.instance);
  const model = str(o.model);
  const waitMs = num(o.waitMs);
  const policy = str(o.policy, 32);
  const weight = num(o.weight);
  if (
    o.v !== 1 ||
    !KINDS.has(kind) ||
    id === undefined ||
    at === undefined ||
    agent === undefined ||
    crew === undefined ||
    instance === undefined ||
    model === undefined ||
    waitMs === undefined ||
    policy === undefined ||
    weight === undefined ||
    weight < 1
  ) {
    return undefined;
  }
  const r: DecisionRecord = { v: 1, id, at, kind, agent, crew, instance, model, waitMs, policy, weight };
  const provider = str(o.provider);
  if (provider !== undefined) r.provider = provider;
  const engine = str(o.engine, 32);
  if (engine !== undefined) r.engine = engine;
  if (typeof o.cold === "boolean") r.cold = o.cold;
  const evicted = strList(o.evicted);
  if (evicted !== undefined) r.evicted = evicted;
  const reason = str(o.reason, 64);
  if (reason !== undefined) r.reason = reason;
  if (typeof o.message === "string") r.message = cutText(o.message);
  if (Array.isArray(o.options)) {
    const options = o.options.slice(0, 3).map(option);
    if (options.every((x) => x !== undefined)) r.options = options as DecisionOption[];
  }
  const priority = str(o.priority, 32);
  if (priority !== undefined) r.priority = priority;
  const position = num(o.queuePosition);
  if (position !== undefined) r.queuePosition = position;
  const revision = num(o.bindingRevision);
  if (revision !== undefined) r.bindingRevision = revision;
  const a = attribution(o.attribution);
  if (a !== undefined) r.attribution = a;
  const traceId = str(o.traceId, 32);
  if (traceId !== undefined && isTraceId(traceId)) r.traceId = traceId;
  return r;
}
