// The X-Kubemoot-* request headers a caller may add to steer placement, and the attribution
// headers every placed response carries.
import type { IncomingHttpHeaders } from "node:http";
import {
  BANDS,
  type Band,
  type Candidate,
  DEFAULT_ENGINE,
  type Engine,
  parseBand,
  parseCandidates,
} from "../../src/core/index.js";
import { normalizeModelName } from "../../src/engines/index.js";
import { hasUnprintable } from "../../src/errors/index.js";
import type { Phase, PlacementOut } from "../../src/scheduler/index.js";
import { isAgentRef, MAX_CONVERSATION_ID } from "../../src/scheduler/index.js";
import { badRequest } from "./http-errors.js";

export const REQUEST_HEADERS = {
  agent: "x-kubemoot-agent",
  thread: "x-kubemoot-thread",
  phase: "x-kubemoot-phase",
  candidates: "x-kubemoot-candidates",
  tolerance: "x-kubemoot-tolerance",
  cannotWait: "x-kubemoot-cannot-wait",
  conversation: "x-kubemoot-conversation",
  priority: "x-kubemoot-priority",
} as const;

export interface CallHeaders {
  /** "namespace/name"; empty = the proxy's default agent. */
  agent: string;
  threadId: string;
  phase: Phase;
  /** The header's candidate list (names normalised), or undefined when absent. */
  candidates: Candidate[] | undefined;
  tolerance: number | undefined;
  cannotWait: boolean;
  /** The caller's conversation id (X-Kubemoot-Conversation); undefined = derived from the prompt. */
  conversation: string | undefined;
  /** The call's band (X-Kubemoot-Priority, docs/rules/fairness.md §2); undefined = the sidecar's. */
  priority: Band | undefined;
}

const MAX_ID_LENGTH = 256;
const MAX_CANDIDATES = 64;

function one(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  const s = Array.isArray(v) ? v.join(",") : v;
  return s === undefined ? undefined : s.trim();
}

export function parseCallHeaders(headers: IncomingHttpHeaders): CallHeaders {
  const agent = one(headers, REQUEST_HEADERS.agent) ?? "";
  if (agent !== "" && !isAgentRef(agent)) {
    throw badRequest(`expected "namespace/name", got "${agent.slice(0, 80)}"`, "X-Kubemoot-Agent");
  }
  const threadId = one(headers, REQUEST_HEADERS.thread) ?? "";
  if (threadId.length > MAX_ID_LENGTH)
    throw badRequest(`longer than ${MAX_ID_LENGTH} characters`, "X-Kubemoot-Thread");
  const rawPhase = (one(headers, REQUEST_HEADERS.phase) ?? "").toLowerCase();
  if (rawPhase !== "" && rawPhase !== "mulling" && rawPhase !== "triage") {
    throw badRequest(
      `unknown phase "${rawPhase.slice(0, 40)}" (want "mulling" or "triage")`,
      "X-Kubemoot-Phase",
    );
  }
  const phase: Phase = rawPhase === "triage" ? "triage" : "mulling";
  let candidates: Candidate[] | undefined;
  const rawCandidates = one(headers, REQUEST_HEADERS.candidates);
  if (rawCandidates !== undefined && rawCandidates !== "") {
    const parsed = parseCandidates(rawCandidates);
    if (parsed.candidates.length === 0 || parsed.reason !== undefined) {
      throw badRequest(
        `${parsed.reason ?? "no candidates"} (expected e.g. [{"model":"qwen3:14b","score":60}])`,
        "X-Kubemoot-Candidates",
      );
    }
    if (parsed.candidates.length > MAX_CANDIDATES) {
      throw badRequest(`more than ${MAX_CANDIDATES} entries`, "X-Kubemoot-Candidates");
    }
    candidates = parsed.candidates.map((c) => ({ model: normalizeModelName(c.model), score: c.score }));
  }
  let tolerance: number | undefined;
  const rawTolerance = one(headers, REQUEST_HEADERS.tolerance);
  if (rawTolerance !== undefined && rawTolerance !== "") {
    tolerance = Number(rawTolerance);
    if (!Number.isFinite(tolerance))
      throw badRequest(`expected a number, got "${rawTolerance}"`, "X-Kubemoot-Tolerance");
  }
  const rawCannotWait = (one(headers, REQUEST_HEADERS.cannotWait) ?? "").toLowerCase();
  if (rawCannotWait !== "" && rawCannotWait !== "true" && rawCannotWait !== "false") {
    throw badRequest(`expected true or false, got "${rawCannotWait.slice(0, 40)}"`, "X-Kubemoot-Cannot-Wait");
  }
  const conversation = one(headers, REQUEST_HEADERS.conversation);
  if (conversation !== undefined) {
    if (conversation === "")
      throw badRequest("empty (leave the header out to have one derived)", "X-Kubemoot-Conversation");
    if (conversation.length > MAX_CONVERSATION_ID)
      throw badRequest(`longer than ${MAX_CONVERSATION_ID} characters`, "X-Kubemoot-Conversation");
    if (hasUnprintable(conversation)) throw badRequest("has control characters", "X-Kubemoot-Conversation");
  }
  const rawPriority = one(headers, REQUEST_HEADERS.priority) ?? "";
  const priority = rawPriority === "" ? undefined : parseBand(rawPriority);
  if (rawPriority !== "" && priority === undefined) {
    throw badRequest(
      `expected one of ${BANDS.join(", ")}, got "${rawPriority.slice(0, 40)}"`,
      "X-Kubemoot-Priority",
    );
  }
  return {
    agent,
    threadId,
    phase,
    candidates,
    tolerance,
    cannotWait: rawCannotWait === "true",
    conversation,
    priority,
  };
}

/**
 * The call's candidates, preferred first: the requested model (its score from the list when
 * it is there, else 100), then the rest of the header's list, else of the configured one.
 */
export function callCandidates(model: string, given: readonly Candidate[]): Candidate[] {
  const listed = given.find((c) => normalizeModelName(c.model) === model);
  const out: Candidate[] = [{ model, score: listed?.score ?? 100 }];
  for (const c of given) {
    const name = normalizeModelName(c.model);
    if (name !== model && !out.some((o) => o.model === name)) out.push({ model: name, score: c.score });
  }
  return out;
}

/**
 * Attribution headers of a placed call: the engine that serves it, and for a translated call
 * the caller's fields that had no equivalent there (X-Kubemoot-Dropped, only when some were).
 */
export function attributionHeaders(
  p: PlacementOut,
  queueWaitMs: number,
  engine: Engine = DEFAULT_ENGINE,
  dropped: readonly string[] = [],
): Record<string, string> {
  return {
    "x-kubemoot-engine": engine,
    ...(dropped.length > 0 ? { "x-kubemoot-dropped": dropped.join(",") } : {}),
    "x-kubemoot-provider": p.provider,
    "x-kubemoot-model": p.model,
    "x-kubemoot-evicted": p.evicted.join(","),
    "x-kubemoot-ticket": p.ticketId,
    "x-kubemoot-cold-load": String(p.coldLoad),
    "x-kubemoot-queue-wait-ms": String(Math.round(queueWaitMs)),
    "x-kubemoot-expected-cached-tokens": String(Math.round(p.expectedCachedTokens)),
    ...(p.priority !== undefined ? { "x-kubemoot-priority": p.priority } : {}),
    "x-kubemoot-queue-position": String(p.queuePosition ?? 0),
    ...(p.bindingRevision ? { "x-kubemoot-binding-revision": String(p.bindingRevision) } : {}),
  };
}
