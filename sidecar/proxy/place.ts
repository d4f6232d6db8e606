// The place stage of a proxied call: the providers' states (a synchronous source costs no turn of
// the event loop), the unknown-model check, the prompt estimate and the scheduler's PlaceInput;
// then what `Scheduler.acquire` settled (call.ts awaits it): a placement, or a refusal or an
// abort answered here (README.md in this folder, "Per call" and "Decisions").
import type { ProviderState } from "../../src/core/index.js";
import { normalizeModelName } from "../../src/engines/index.js";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { Acquired, ConversationRef, PlaceInput } from "../../src/scheduler/index.js";
import type { CallContext } from "./call-context.js";
import { PlacedCall, type ProxyCall } from "./call-state.js";
import { publishedModels, publishedSpellings } from "./catalog.js";
import { type CallHeaders, callCandidates } from "./kubemoot-headers.js";
import { derivedConversation } from "./prompt-marks.js";
import { refusalError } from "./refusal-errors.js";
import type { CallRequest } from "./validate.js";

type States = ProviderState[] | undefined;

/** The providers' states, or undefined when there is no source or it cannot be read now. */
export function readStates(ctx: CallContext): States | Promise<States> {
  if (!ctx.providers) return undefined;
  try {
    const v = ctx.providers();
    // A synchronous source (e.g. the watched copy's peekAll) is used as it is.
    return Array.isArray(v) ? v : v.then(undefined, () => undefined);
  } catch {
    return undefined; // the scheduler will say what it can
  }
}

/** The states, when the source answers synchronously (the watched copy). */
function syncStates(ctx: CallContext): States {
  const v = readStates(ctx);
  return Array.isArray(v) ? v : undefined;
}

/**
 * The published model names, read as Ollama reads them (`known`) and the spellings providers
 * publish where those differ (catalog.ts publishedSpellings); undefined with no state at all.
 */
interface ModelNames {
  known: ReadonlySet<string>;
  spell: ReadonlyMap<string, string>;
}

function namesOf(published: Iterable<string>): ModelNames {
  const all = [...published];
  return { known: new Set(all.map(normalizeModelName)), spell: publishedSpellings(all) };
}

/** A models source's answer, read once for as long as the source answers the same object. */
const cachedNames = new WeakMap<Iterable<string>, ModelNames>();
function modelNames(ctx: CallContext, states: States): ModelNames | undefined {
  if (!ctx.models) return states ? namesOf(publishedModels(states)) : undefined;
  const models = ctx.models();
  let n = cachedNames.get(models);
  if (n === undefined) {
    n = namesOf(models);
    cachedNames.set(models, n);
  }
  return n;
}

/** model-not-found when no provider has the model and it is no configured or given candidate. */
function checkKnown(
  ctx: CallContext,
  model: string,
  headers: CallHeaders,
  names: ModelNames | undefined,
): void {
  const known = names?.known;
  if (!known || known.size === 0) return; // no state at all: unknown is not absent
  if (known.has(model)) return;
  const cfg = ctx.scheduler.config;
  const listed = [...cfg.candidatesMulling, ...cfg.candidatesTriage, ...(headers.candidates ?? [])];
  if (listed.some((c) => normalizeModelName(c.model) === model)) return;
  throw new KubemootError(ErrorCode.NotFound, `model "${model}" not found, try pulling it first`, {
    reason: "model-not-found",
    detail: { model },
  });
}

/** What the call asks the scheduler for; throws model-not-found for a model no one has. */
export function placeInput(
  call: ProxyCall,
  request: CallRequest,
  headers: CallHeaders,
  states: States,
): PlaceInput {
  const { scheduler, settings } = call.ctx;
  const names = modelNames(call.ctx, states);
  checkKnown(call.ctx, request.model, headers, names);
  const spell = names?.spell;
  if (!request.loadOnly) call.estimate = scheduler.promptEstimate(0, request.promptChars);
  const agent = headers.agent || settings.agent;
  // Without candidates of its own, the request's model falls back to its thread's binding's
  // (docs/rules/binding.md §9), else the pod's; the request's model itself is always tried.
  const bound =
    headers.candidates === undefined
      ? scheduler.candidatesFor({ phase: headers.phase, candidates: [], agent, threadId: headers.threadId })
      : undefined;
  return {
    agent: headers.agent || settings.agent,
    threadId: headers.threadId,
    phase: headers.phase,
    // Asked for as the providers publish them: an engine's `tiny`, not `tiny:latest`.
    candidates: callCandidates(request.model, headers.candidates ?? bound?.candidates ?? []).map((c) => ({
      ...c,
      model: spell?.get(c.model) ?? c.model,
    })),
    ...(headers.tolerance !== undefined ? { tolerance: headers.tolerance } : {}),
    // The scheduler estimates from the chars (and keeps the generous count for refusals).
    promptTokens: 0,
    promptChars: request.loadOnly ? 0 : request.promptChars,
    maxOutputTokens: request.maxOutputTokens,
    cannotWait: headers.cannotWait,
    conversation: conversationOf(headers, request, headers.agent || settings.agent),
    ...(headers.priority !== undefined ? { priority: headers.priority } : {}),
    ...(bound?.bindingRevision ? { bindingRevision: bound.bindingRevision } : {}),
  };
}

/** The call's conversation: the caller's id, else one derived from how the chat began. */
function conversationOf(
  headers: CallHeaders,
  request: CallRequest,
  agent: string,
): ConversationRef | undefined {
  const marks = request.marks;
  const id = headers.conversation ?? (marks ? derivedConversation(agent, marks) : undefined);
  if (id === undefined) return undefined;
  return { id, ...(marks ? { marks } : {}), promptChars: request.promptChars };
}

/** The placement `acquired` gave, or undefined once the refusal or abort is answered. */
export function placed(
  call: ProxyCall,
  request: CallRequest,
  states: States,
  acquired: Acquired,
): PlacedCall | undefined {
  if (acquired.kind === "aborted") {
    call.reason = "client-gone";
    call.queueWaitMs = acquired.waitedMs;
    if (!call.res.writableEnded) {
      if (call.ctx.shutdown.aborted && !call.clientGone) {
        call.fail(new KubemootError(ErrorCode.ShuttingDown, "the sidecar is shutting down"));
      } else call.res.destroy();
    }
    return undefined;
  }
  if (acquired.kind === "refused") {
    call.queueWaitMs = acquired.waitedMs;
    call.fail(refusalError(acquired.refusal, call.ctx.settings, acquired.waitedMs));
    return undefined;
  }
  call.queueWaitMs = acquired.queueWaitMs;
  // A provider first followed for this call is in the copies now, if not in what was read before.
  const name = acquired.placement.provider;
  const state = states?.find((x) => x.name === name) ?? syncStates(call.ctx)?.find((x) => x.name === name);
  call.placed = new PlacedCall(call, request, acquired.placement, state);
  return call.placed;
}
