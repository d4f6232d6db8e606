// Values and keys of kubemoot_discussion_bindings (docs/rules/state.md §2.5): one binding per
// (discussion thread, phase), published by the operator-side binder and read by sidecars and
// plain NATS subscribers. A public format: the binder writes it, runtimes in other languages read
// it, so it is checked field by field both ways. `encodeDiscussionBinding` refuses (throws) what
// `decodeDiscussionBinding` would skip, so whatever the binder publishes every reader accepts.
import { invalidArgument, quoteInput } from "../errors/index.js";
import { isObject } from "./json-fields.js";
import { decodeJson, encodeJson } from "./kv.js";

/** Largest value the bucket takes (bytes); also the bucket's `maxValueBytes`. */
export const DISCUSSION_BINDING_MAX_BYTES = 8192;
/** Longest thread id (characters). */
export const MAX_THREAD_ID_CHARS = 128;
/** Most ranked candidates a value may list. */
export const MAX_DISCUSSION_CANDIDATES = 64;
/** Most conditions a value may carry. */
const MAX_CONDITIONS = 16;
/** Longest name-like field: agent, model, modelRef, provider, engine, a candidate's model, a condition's type or reason. */
const MAX_NAME = 256;
/** Longest free text: reason, endpoint, a condition's message. */
const MAX_TEXT = 1024;
/** Longest `boundAt`. */
const MAX_TIME = 64;

export const DISCUSSION_PHASES = ["mulling", "triage"] as const;
export type DiscussionPhase = (typeof DISCUSSION_PHASES)[number];

/** One ranked candidate: a model and its score. */
export interface DiscussionCandidate {
  model: string;
  score: number;
}

/** A Kubernetes-style condition, as an Agent's `Scheduled` condition / `lastUnschedulable`. */
export interface DiscussionCondition {
  type: string;
  status: "True" | "False";
  reason: string;
  message: string;
}

/**
 * The value of `<threadId>.<phase>` in kubemoot_discussion_bindings, JSON, version 1.
 * Unknown fields are ignored by readers (and dropped by `decodeDiscussionBinding`).
 */
export interface DiscussionBinding {
  /** Format version: exactly 1. Any other value is a foreign format and is skipped. */
  v: 1;
  /** "binding": the thread's phase runs on `model`; "unschedulable": no model matches (see `reason`, `conditions`). */
  kind: "binding" | "unschedulable";
  /** The discussion thread id: the key's first token (1–128 of `[A-Za-z0-9_-]`). */
  thread: string;
  /** The phase: the key's second token. */
  phase: DiscussionPhase;
  /** The agent bound, `<namespace>/<name>`. */
  agent: string;
  /** The model the phase runs on. Required when kind is "binding". */
  model?: string;
  /** The model's reference as the binder resolved it (e.g. a ModelRef name). */
  modelRef?: string;
  /** The provider (ModelProvider name) serving `model`. */
  provider?: string;
  /** The provider's endpoint (URL). */
  endpoint?: string;
  /** The provider's engine (e.g. "ollama", "vllm"). */
  engine?: string;
  /** The bound model's score (finite). */
  score?: number;
  /** Ranked candidates, best first; may be empty; at most 64. */
  candidates: DiscussionCandidate[];
  /** Why it is bound this way ("bound", "rebound: provider gpu-b is better by 40 points"), or why nothing matches. */
  reason: string;
  /** For "unschedulable": conditions like an Agent's `Scheduled`=False / `lastUnschedulable`. */
  conditions?: DiscussionCondition[];
  /** The binder's revision of this (thread, phase): 1 first, +1 on every change. */
  revision: number;
  /** When this revision was decided: an ISO 8601 time. */
  boundAt: string;
}

/** What `decodeDiscussionBinding` read: the binding, or undefined and why it was skipped. */
export type DiscussionDecoded =
  | { binding: DiscussionBinding; reason?: undefined }
  | { binding: undefined; reason: string };

const THREAD_ID = /^[A-Za-z0-9_-]+$/;

function threadIdProblem(id: unknown): string | undefined {
  if (typeof id !== "string") return `must be a string, got ${id === null ? "null" : typeof id}`;
  if (id.length < 1 || id.length > MAX_THREAD_ID_CHARS || !THREAD_ID.test(id)) {
    return (
      `must be 1–${MAX_THREAD_ID_CHARS} characters of [A-Za-z0-9_-] (one NATS key token: ` +
      `no dots, wildcards or whitespace), got ${quoteInput(id)}`
    );
  }
  return undefined;
}

function phaseProblem(p: unknown): string | undefined {
  if ((DISCUSSION_PHASES as readonly unknown[]).includes(p)) return undefined;
  const got = typeof p === "string" ? quoteInput(p) : p === null ? "null" : typeof p;
  return `must be one of ${DISCUSSION_PHASES.map((x) => `"${x}"`).join(", ")}, got ${got}`;
}

/** Throws InvalidArgument (naming `field`) unless `id` is a thread id: 1–128 of `[A-Za-z0-9_-]`. */
export function validateThreadId(id: unknown, field: string): asserts id is string {
  const problem = threadIdProblem(id);
  if (problem !== undefined) throw invalidArgument(field, problem);
}

/** Throws InvalidArgument (naming `field`) unless `p` is "mulling" or "triage". */
export function validatePhase(p: unknown, field: string): asserts p is DiscussionPhase {
  const problem = phaseProblem(p);
  if (problem !== undefined) throw invalidArgument(field, problem);
}

/** The key of a (thread, phase): `<threadId>.<phase>`; throws InvalidArgument on a bad id or phase. */
export function discussionBindingKey(threadId: string, phase: DiscussionPhase): string {
  validateThreadId(threadId, "thread");
  validatePhase(phase, "phase");
  return `${threadId}.${phase}`;
}

/** The (thread, phase) a key names, or undefined for any other key. */
export function parseDiscussionBindingKey(
  key: string,
): { thread: string; phase: DiscussionPhase } | undefined {
  const dot = key.indexOf(".");
  if (dot < 0) return undefined;
  const thread = key.slice(0, dot);
  const phase = key.slice(dot + 1);
  if (threadIdProblem(thread) !== undefined || phaseProblem(phase) !== undefined) return undefined;
  return { thread, phase: phase as DiscussionPhase };
}

/** A field's problem: [field, message]. */
type Problem = [string, string];

/** Whether a string field may be absent ("optional"), must be there ("present") or must be non-empty ("filled"). */
type Need = "optional" | "present" | "filled";

function stringProblem(v: unknown, field: string, max: number, need: Need): Problem | undefined {
  if (v === undefined && need === "optional") return undefined;
  if (typeof v !== "string") return [field, "must be a string"];
  if (need === "filled" && v === "") return [field, "must not be empty"];
  if (v.length > max) return [field, `must be at most ${max} characters, has ${v.length}`];
  return undefined;
}

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function candidatesProblem(v: unknown): Problem | undefined {
  if (!Array.isArray(v)) return ["candidates", "must be an array"];
  if (v.length > MAX_DISCUSSION_CANDIDATES) {
    return ["candidates", `must list at most ${MAX_DISCUSSION_CANDIDATES} entries, has ${v.length}`];
  }
  for (const [i, c] of v.entries()) {
    if (!isObject(c)) return [`candidates[${i}]`, "must be an object"];
    const p = stringProblem(c.model, `candidates[${i}].model`, MAX_NAME, "filled");
    if (p !== undefined) return p;
    if (!finite(c.score)) return [`candidates[${i}].score`, "must be a finite number"];
  }
  return undefined;
}

function conditionsProblem(v: unknown): Problem | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) return ["conditions", "must be an array"];
  if (v.length > MAX_CONDITIONS) return ["conditions", `must list at most ${MAX_CONDITIONS} entries`];
  for (const [i, c] of v.entries()) {
    const at = `conditions[${i}]`;
    if (!isObject(c)) return [at, "must be an object"];
    if (c.status !== "True" && c.status !== "False") return [`${at}.status`, 'must be "True" or "False"'];
    const p =
      stringProblem(c.type, `${at}.type`, MAX_NAME, "filled") ??
      stringProblem(c.reason, `${at}.reason`, MAX_NAME, "present") ??
      stringProblem(c.message, `${at}.message`, MAX_TEXT, "present");
    if (p !== undefined) return p;
  }
  return undefined;
}

/** The first problem of a parsed value, or undefined when it is a valid version-1 binding. */
function bindingProblem(raw: unknown): Problem | undefined {
  if (!isObject(raw)) return ["value", "must be a JSON object"];
  if (raw.v !== 1) return ["v", `must be 1, got ${typeof raw.v === "number" ? raw.v : typeof raw.v}`];
  if (raw.kind !== "binding" && raw.kind !== "unschedulable") {
    return ["kind", 'must be "binding" or "unschedulable"'];
  }
  const thread = threadIdProblem(raw.thread);
  if (thread !== undefined) return ["thread", thread];
  const phase = phaseProblem(raw.phase);
  if (phase !== undefined) return ["phase", phase];
  const agent = stringProblem(raw.agent, "agent", MAX_NAME, "filled");
  if (agent !== undefined) return agent;
  if (!/^[^/\s]+\/[^/\s]+$/.test(raw.agent as string)) return ["agent", "must be <namespace>/<name>"];
  const p =
    stringProblem(raw.model, "model", MAX_NAME, raw.kind === "binding" ? "filled" : "optional") ??
    stringProblem(raw.modelRef, "modelRef", MAX_NAME, "optional") ??
    stringProblem(raw.provider, "provider", MAX_NAME, "optional") ??
    stringProblem(raw.endpoint, "endpoint", MAX_TEXT, "optional") ??
    stringProblem(raw.engine, "engine", MAX_NAME, "optional") ??
    (raw.score !== undefined && !finite(raw.score)
      ? (["score", "must be a finite number"] as Problem)
      : undefined) ??
    candidatesProblem(raw.candidates) ??
    stringProblem(raw.reason, "reason", MAX_TEXT, "present") ??
    conditionsProblem(raw.conditions);
  if (p !== undefined) return p;
  if (!Number.isSafeInteger(raw.revision) || (raw.revision as number) < 1) {
    return ["revision", "must be an integer of at least 1"];
  }
  const boundAt = stringProblem(raw.boundAt, "boundAt", MAX_TIME, "filled");
  if (boundAt !== undefined) return boundAt;
  if (!Number.isFinite(Date.parse(raw.boundAt as string))) return ["boundAt", "must be an ISO 8601 time"];
  return undefined;
}

/** The known fields of a checked value, in the documented order (unknown ones dropped). */
function normalized(raw: Record<string, unknown>): DiscussionBinding {
  const opt = <K extends string>(k: K) => (raw[k] === undefined ? {} : { [k]: raw[k] });
  return {
    v: 1,
    kind: raw.kind as DiscussionBinding["kind"],
    thread: raw.thread as string,
    phase: raw.phase as DiscussionPhase,
    agent: raw.agent as string,
    ...opt("model"),
    ...opt("modelRef"),
    ...opt("provider"),
    ...opt("endpoint"),
    ...opt("engine"),
    ...opt("score"),
    candidates: (raw.candidates as DiscussionCandidate[]).map((c) => ({ model: c.model, score: c.score })),
    reason: raw.reason as string,
    ...(raw.conditions === undefined
      ? {}
      : {
          conditions: (raw.conditions as DiscussionCondition[]).map((c) => ({
            type: c.type,
            status: c.status,
            reason: c.reason,
            message: c.message,
          })),
        }),
    revision: raw.revision as number,
    boundAt: raw.boundAt as string,
  };
}

/**
 * The bytes to store for `v` (JSON, known fields only). Throws InvalidArgument, naming the field,
 * for anything a reader would skip, or when the JSON exceeds DISCUSSION_BINDING_MAX_BYTES.
 */
export function encodeDiscussionBinding(v: DiscussionBinding): Uint8Array {
  const problem = bindingProblem(v);
  if (problem !== undefined) throw invalidArgument(problem[0], problem[1]);
  const bytes = encodeJson(normalized(v as unknown as Record<string, unknown>));
  if (bytes.byteLength > DISCUSSION_BINDING_MAX_BYTES) {
    throw invalidArgument(
      "value",
      `encodes to ${bytes.byteLength} bytes, over the bucket's maximum of ${DISCUSSION_BINDING_MAX_BYTES}`,
    );
  }
  return bytes;
}

/**
 * Reads the value stored under `key`. Never throws: anything malformed or foreign (not JSON, a
 * key that is not `<thread>.<phase>`, a value naming another thread or phase, another `v`, a
 * wrong type, an oversize field, more than 64 candidates) gives `binding: undefined` and why.
 */
export function decodeDiscussionBinding(bytes: Uint8Array, key: string): DiscussionDecoded {
  const skip = (reason: string): DiscussionDecoded => ({ binding: undefined, reason });
  const named = parseDiscussionBindingKey(key);
  if (named === undefined) return skip(`key ${quoteInput(key)} is not <threadId>.<phase>`);
  if (bytes.byteLength > DISCUSSION_BINDING_MAX_BYTES) {
    return skip(`value of ${bytes.byteLength} bytes exceeds ${DISCUSSION_BINDING_MAX_BYTES}`);
  }
  let raw: unknown;
  try {
    raw = decodeJson(bytes);
  } catch {
    return skip("value is not JSON");
  }
  const problem = bindingProblem(raw);
  if (problem !== undefined) return skip(`${problem[0]}: ${problem[1]}`);
  const b = normalized(raw as Record<string, unknown>);
  if (b.thread !== named.thread || b.phase !== named.phase) {
    return skip(`value names ${b.thread}.${b.phase}, not its key ${key}`);
  }
  return { binding: b };
}

/** Whether `id` can name a discussion thread (a key token); other thread ids have no bindings. */
export function isDiscussionThreadId(id: string): boolean {
  return threadIdProblem(id) === undefined;
}
