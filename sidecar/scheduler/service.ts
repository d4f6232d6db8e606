// The SchedulerService implementation over the transport-agnostic Scheduler: validates every
// request (INVALID_ARGUMENT naming the field) and maps proto messages to and from the
// scheduler's types. It throws our error family; the API server maps it onto RPC codes
// (sidecar/api/interceptors/errors.ts) for every protocol.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { BANDS, type Band, type Candidate, parseBand } from "../../src/core/index.js";
import {
  ErrorCode,
  hasUnprintable,
  invalidArgument,
  KubemootError,
  printable,
  quoteInput,
} from "../../src/errors/index.js";
import {
  type AttributionSchema,
  CallOutcome,
  type PlacementSchema,
  Refusal_Reason,
  type RefusalSchema,
  type SchedulerService,
} from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import type {
  AttributionOut,
  CallOutcome as CallOutcomeKind,
  Phase,
  PlaceInput,
  PlacementOut,
  RefusalOut,
  Scheduler,
} from "../../src/scheduler/index.js";
import { isAgentRef, MAX_CONVERSATION_ID } from "../../src/scheduler/index.js";

// Every string field is bounded, and an error quotes at most a short printable prefix of it
// (src/errors/quote.ts): a message travels in an HTTP/2 header.
const MAX_ID_LENGTH = 256;
/** "namespace/name": the same bound as the other names. */
const MAX_AGENT_LENGTH = 256;
/** Release's error text is kept (attribution) up to this many characters, the rest cut. */
const MAX_ERROR_LENGTH = 1024;
const MAX_CANDIDATES = 64;
/** The widest gap between two int32 scores: a larger tolerance means nothing more. */
const MAX_TOLERANCE = 2 ** 32 - 1;
/** Renew may extend a lease by at most this much (s): a longer call renews again. */
const MAX_EXTEND_S = 3600;

const bad = invalidArgument;

function nonNegative(field: string, v: bigint): number {
  if (v < 0n) throw bad(field, `must be ≥ 0, got ${v}`);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(field, `too large: ${v}`);
  return Number(v);
}

/** Cached prompt tokens: ≥ 0 and, when the prompt's tokens are given, no more than they. */
function cachedOf(cached: bigint, prompt: bigint): number {
  const n = nonNegative("cached_prompt_tokens", cached);
  if (prompt > 0n && cached > prompt)
    throw bad("cached_prompt_tokens", `more than prompt_tokens (${cached} > ${prompt})`);
  return n;
}

/** A bounded string without control characters (they would reach logs and messages). */
function text(field: string, v: string, max: number): string {
  if (v.length > max) throw bad(field, `longer than ${max} characters (${v.length})`);
  if (hasUnprintable(v)) throw bad(field, `control characters are not allowed: ${quoteInput(v)}`);
  return v;
}

function id(field: string, v: string, required: boolean): string {
  if (required && v === "") throw bad(field, "must not be empty");
  return text(field, v, MAX_ID_LENGTH);
}

function phaseOf(v: string): Phase {
  if (v === "" || v === "mulling") return "mulling";
  if (v === "triage") return "triage";
  throw bad("phase", `unknown phase ${quoteInput(v, 40)} (want "mulling" or "triage")`);
}

function toleranceOf(v: bigint | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (v < 0n) throw bad("tolerance", `must be ≥ 0, got ${v}`);
  if (v > BigInt(MAX_TOLERANCE)) throw bad("tolerance", `at most ${MAX_TOLERANCE} points, got ${v}`);
  return Number(v);
}

/** "namespace/name" or empty (the field's meaning for empty is the caller's). */
function agentRef(field: string, v: string): string {
  if (v.length > MAX_AGENT_LENGTH)
    throw bad(field, `longer than ${MAX_AGENT_LENGTH} characters (${v.length})`);
  if (v !== "" && !isAgentRef(v)) throw bad(field, `expected "namespace/name", got ${quoteInput(v)}`);
  return v;
}

/** Release's error text: printable, and cut to MAX_ERROR_LENGTH (a Release is never refused for it). */
function errorText(v: string): string {
  const cut = v.length > MAX_ERROR_LENGTH ? `${v.slice(0, MAX_ERROR_LENGTH - 1)}…` : v;
  return printable(cut);
}

function candidatesOf(list: readonly { model: string; score: number }[]): Candidate[] {
  if (list.length > MAX_CANDIDATES) throw bad("candidates", `more than ${MAX_CANDIDATES} entries`);
  return list.map((c, i) => {
    // Bounded, but taken as sent: a name no GPU has is refused as model-unknown, its refusal
    // text quoting it printable (docs/rules/identity.md §3).
    if (c.model.trim() === "") throw bad(`candidates[${i}].model`, "must not be empty");
    if (c.model.length > MAX_ID_LENGTH) {
      throw bad(`candidates[${i}].model`, `longer than ${MAX_ID_LENGTH} characters (${c.model.length})`);
    }
    return { model: c.model, score: c.score };
  });
}

/**
 * The request's agent, empty = this sidecar's own. Whether this sidecar may act for it is the
 * scheduler's check (Scheduler.assertServes), on every path that calls it.
 */
function agentOf(given: string, scheduler: Scheduler): string {
  const agent = agentRef("agent", given) || scheduler.config.agent;
  if (agent === "") throw bad("agent", "empty, and this sidecar has no agent configured (--agent)");
  return agent;
}

interface PlaceLike {
  agent: string;
  threadId: string;
  phase: string;
  candidates: { model: string; score: number }[];
  tolerance?: bigint;
  promptTokens: bigint;
  promptChars: bigint;
  maxOutputTokens: bigint;
  cannotWait: boolean;
  conversationId: string;
  priority: string;
}

/** A call's band (docs/rules/fairness.md §2); empty = the sidecar's. */
export function priorityOf(field: string, raw: string): { priority?: Band } {
  if (raw.trim() === "") return {};
  const b = parseBand(raw);
  if (b === undefined) throw bad(field, `expected one of ${BANDS.join(", ")}, got ${quoteInput(raw)}`);
  return { priority: b };
}

export function placeInputOf(req: PlaceLike, scheduler: Scheduler): PlaceInput {
  const tolerance = toleranceOf(req.tolerance);
  return {
    agent: agentOf(req.agent, scheduler),
    threadId: id("thread_id", req.threadId, false),
    phase: phaseOf(req.phase),
    candidates: candidatesOf(req.candidates),
    ...(tolerance !== undefined ? { tolerance } : {}),
    promptTokens: nonNegative("prompt_tokens", req.promptTokens),
    promptChars: nonNegative("prompt_chars", req.promptChars),
    maxOutputTokens: nonNegative("max_output_tokens", req.maxOutputTokens),
    cannotWait: req.cannotWait,
    ...conversationOf(req),
    ...priorityOf("priority", req.priority),
  };
}

/** A conversation named over the API: its id and the prompt's size (the prompt itself is not seen). */
function conversationOf(req: PlaceLike): Pick<PlaceInput, "conversation"> {
  if (req.conversationId === "") return {};
  const conversation = text("conversation_id", req.conversationId, MAX_CONVERSATION_ID);
  return { conversation: { id: conversation, promptChars: nonNegative("prompt_chars", req.promptChars) } };
}

export function placementMessage(p: PlacementOut): MessageInitShape<typeof PlacementSchema> {
  return {
    ticketId: p.ticketId,
    provider: p.provider,
    endpoint: p.endpoint,
    model: p.model,
    coldLoad: p.coldLoad,
    evicted: p.evicted,
    footprintMib: BigInt(Math.round(p.footprintMiB)),
    contextLength: BigInt(Math.round(p.contextLength)),
    ...(p.expiresAtMs > 0 ? { expiresAt: timestampFromMs(p.expiresAtMs) } : {}),
    fromPlan: p.fromPlan,
    staticFallback: p.staticFallback,
    engine: p.engine,
    expectedCachedPromptTokens: BigInt(Math.round(p.expectedCachedTokens)),
    priority: p.priority ?? "",
    queuePosition: BigInt(p.queuePosition ?? 0),
    bindingRevision: BigInt(p.bindingRevision ?? 0),
  };
}

const OUTCOMES: Record<CallOutcomeKind, CallOutcome> = {
  unspecified: CallOutcome.UNSPECIFIED,
  succeeded: CallOutcome.SUCCEEDED,
  failed: CallOutcome.FAILED,
};

function outcomeOf(v: CallOutcome): CallOutcomeKind {
  switch (v) {
    case CallOutcome.UNSPECIFIED:
      return "unspecified";
    case CallOutcome.SUCCEEDED:
      return "succeeded";
    case CallOutcome.FAILED:
      return "failed";
    default:
      throw bad("outcome", `unknown CallOutcome ${String(v)}`);
  }
}

// A refusal is an answer, not an error (a refused Place succeeds with a Refusal), so its reason
// maps onto the proto's own enum here, not through the wire table (src/errors/wire.ts). The
// proxy answers the same refusals as errors of that table (sidecar/proxy/refusal-errors.ts).
const REASONS: Record<RefusalOut["reason"], Refusal_Reason> = {
  "gpu-busy": Refusal_Reason.GPU_BUSY,
  "model-too-large": Refusal_Reason.MODEL_TOO_LARGE,
  "prompt-too-large": Refusal_Reason.PROMPT_TOO_LARGE,
  "provider-unavailable": Refusal_Reason.PROVIDER_UNAVAILABLE,
  "model-unknown": Refusal_Reason.MODEL_UNKNOWN,
  unschedulable: Refusal_Reason.UNSCHEDULABLE,
};

export function refusalMessage(r: RefusalOut): MessageInitShape<typeof RefusalSchema> {
  return {
    reason: REASONS[r.reason],
    model: r.model,
    message: printable(r.message),
    largestContext: BigInt(Math.round(r.largestContext)),
    promptTokens: BigInt(Math.round(r.promptTokens)),
    // An overdue call ("any moment now") estimates 0 s: report 1 ms so that 0 keeps meaning unknown.
    estimatedWaitMs:
      r.estimatedWaitS === undefined || !Number.isFinite(r.estimatedWaitS)
        ? 0n
        : BigInt(Math.max(1, Math.round(r.estimatedWaitS * 1000))),
    queuePosition: BigInt(r.queuePosition ?? 0),
    bindingRevision: BigInt(r.bindingRevision ?? 0),
  };
}

/** Attribute's answer for one call (also what the web view's decision records carry). */
export function attributionMessage(a: AttributionOut): MessageInitShape<typeof AttributionSchema> {
  return {
    ticketId: a.ticketId,
    provider: a.provider,
    endpoint: a.endpoint,
    model: a.model,
    evicted: a.evicted,
    coldLoad: a.coldLoad,
    queueWaitMs: BigInt(Math.round(a.queueWaitMs)),
    placedAt: timestampFromMs(a.placedAtMs),
    ...(a.releasedAtMs > 0 ? { releasedAt: timestampFromMs(a.releasedAtMs) } : {}),
    latencyMs: BigInt(Math.round(a.latencyMs)),
    estimatedPromptTokens: BigInt(a.estimatedPromptTokens),
    promptTokens: BigInt(a.promptTokens),
    cachedPromptTokens: BigInt(a.cachedPromptTokens),
    expectedCachedPromptTokens: BigInt(Math.round(a.expectedCachedPromptTokens)),
    prefillSavedMs: BigInt(Math.round(a.prefillSavedMs)),
    priority: a.priority,
    queuePosition: BigInt(a.queuePosition),
    bindingRevision: BigInt(a.bindingRevision),
    truncated: a.truncated,
    success: a.success,
    outcome: OUTCOMES[a.outcome],
    error: a.error,
    fromPlan: a.fromPlan,
    engine: a.engine,
  };
}

export function schedulerService(scheduler: Scheduler): ServiceImpl<typeof SchedulerService> {
  return {
    async place(req) {
      const out = await scheduler.place(placeInputOf(req, scheduler));
      return out.kind === "placed"
        ? { result: { case: "placement", value: placementMessage(out.placement) } }
        : { result: { case: "refusal", value: refusalMessage(out.refusal) } };
    },

    async *wait(req, ctx) {
      const input = placeInputOf(req, scheduler);
      const limit = nonNegative("limit_seconds", req.limitSeconds);
      for await (const ev of scheduler.wait(input, ctx.signal, limit)) {
        if (ev.kind === "waiting") {
          yield {
            event: {
              case: "waiting",
              value: { refusal: refusalMessage(ev.refusal), deadline: timestampFromMs(ev.deadlineMs) },
            },
          };
        } else if (ev.kind === "placed") {
          yield { event: { case: "placed", value: placementMessage(ev.placement) } };
        } else {
          yield { event: { case: "standAside", value: refusalMessage(ev.refusal) } };
        }
      }
    },

    async release(req) {
      return {
        released: await scheduler.release({
          ticketId: id("ticket_id", req.ticketId, true),
          outcome: outcomeOf(req.outcome),
          latencyMs: nonNegative("latency_ms", req.latencyMs),
          promptTokens: nonNegative("prompt_tokens", req.promptTokens),
          promptChars: nonNegative("prompt_chars", req.promptChars),
          outputTokens: nonNegative("output_tokens", req.outputTokens),
          cachedPromptTokens: cachedOf(req.cachedPromptTokens, req.promptTokens),
          promptEvalMs: nonNegative("prompt_eval_ms", req.promptEvalMs),
          loadMs: nonNegative("load_ms", req.loadMs),
          providerUnreachable: req.providerUnreachable,
          error: errorText(req.error),
        }),
      };
    },

    async renew(req) {
      const extend = nonNegative("extend_seconds", req.extendSeconds);
      if (extend > MAX_EXTEND_S) throw bad("extend_seconds", `at most ${MAX_EXTEND_S}`);
      const expires = await scheduler.renew(id("ticket_id", req.ticketId, true), extend);
      return { expiresAt: timestampFromMs(expires) };
    },

    async commit(req) {
      const crew = agentRef("crew", req.crew);
      const tolerance = toleranceOf(req.tolerance);
      const out = await scheduler.commit({
        agent: agentOf(req.agent, scheduler),
        threadId: id("thread_id", req.threadId, true),
        phase: phaseOf(req.phase),
        candidates: candidatesOf(req.candidates),
        ...(tolerance !== undefined ? { tolerance } : {}),
        crew,
        promptChars: nonNegative("prompt_chars", req.promptChars),
      });
      return out.kind === "placed"
        ? { result: { case: "planned", value: placementMessage(out.placement) } }
        : { result: { case: "refusal", value: refusalMessage(out.refusal) } };
    },

    async endThread(req) {
      return {
        releasedTickets: await scheduler.endThread(
          agentOf(req.agent, scheduler),
          id("thread_id", req.threadId, true),
        ),
      };
    },

    async attribute(req) {
      const a = scheduler.attribute(id("ticket_id", req.ticketId, true));
      if (!a) {
        throw new KubemootError(
          ErrorCode.NotFound,
          `ticket_id: no attribution for ${quoteInput(req.ticketId)} on this sidecar`,
          { field: "ticket_id" },
        );
      }
      return attributionMessage(a);
    },
  };
}
