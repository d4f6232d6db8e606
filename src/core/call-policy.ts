// The call policy: what a caller does with a decision, how a finished call is judged and what
// it teaches. One set of pure rules that the sidecar's Place/Wait/Release, the local proxy and
// the simulation all call, so that none of them can drift from the others
// (docs/rules/placement.md §3, §5, §6).

import { type CharsPerToken, estimateTokens } from "./chars-per-token.js";
import { CLOSED_CIRCUIT, recordFailure, recordSuccess } from "./circuit-breaker.js";
import { CHARS_PER_TOKEN_MAX, MIN_PREFILL_SAMPLE_TOKENS, TRUNCATION_RATIO } from "./constants.js";
import type { Decision } from "./decision.js";
import { recordLatency } from "./latency-ema.js";
import type { Phase } from "./planner.js";
import { gpuBusyMessage, type RefusalReason } from "./refusal.js";
import type { ProviderHealth } from "./snapshot.js";
import { NO_SUCCESS_SAMPLES, recordOutcome } from "./success-rate.js";

/** A refusal as Place answers it. */
export interface Refusal {
  reason: RefusalReason;
  model: string;
  message: string;
  largestContext: number;
  /**
   * Whether a state change may turn this into a placement (queue, wait for memory, a lost
   * race); false for a refusal waiting cannot change, or a call the planner never lets wait.
   */
  waitable: boolean;
  /** gpu-busy from a queue decision: the planner's estimate (s) until a slot frees. */
  estimatedWaitS?: number;
}

/** The refusal Place returns for a decision, or undefined for a claim. */
export function refusalOf(d: Decision): Refusal | undefined {
  switch (d.kind) {
    case "claim":
      return undefined;
    case "queue":
      return {
        reason: "gpu-busy",
        model: d.model,
        message: d.message || gpuBusyMessage(d.model),
        largestContext: 0,
        waitable: true,
        estimatedWaitS: d.estimatedWaitS,
      };
    case "wait-for-memory":
      return { reason: "gpu-busy", model: d.model, message: d.message, largestContext: 0, waitable: true };
    case "refuse":
      return {
        reason: d.reason,
        model: d.model,
        message: d.message,
        largestContext: d.largestContext,
        waitable: false,
      };
  }
}

/** The refusal when no decision could be made at all (every claim lost its race). */
export function lostRaceRefusal(model: string): Refusal {
  return { reason: "gpu-busy", model, message: gpuBusyMessage(model), largestContext: 0, waitable: true };
}

/** What the caller of a refused call is. */
export interface RefusedCall {
  phase: Phase;
  /** A call that may not wait (a coordinator's advisory or synthesis call). */
  cannotWait: boolean;
  /** Whether a static endpoint is bound for the call's phase. */
  hasStaticBinding: boolean;
  /** The longest this caller may wait (s); 0 = never. */
  waitLimitS: number;
}

/**
 * What a refused call does next:
 * - "static-fallback": a call that cannot wait takes its bound static endpoint — on gpu-busy or
 *   model-too-large, never on prompt-too-large (the static endpoint would cut the prompt);
 * - "wait": a waitable refusal (gpu-busy that a state change may lift) of a call that may wait
 *   (not triage, not cannot-wait, a wait limit above zero) waits for the next state change;
 * - "stand-aside": everything else, at once.
 */
export function afterRefusal(
  // A string: the sidecar adds reasons of its own (a thread's unschedulable binding), never waitable.
  refusal: { readonly reason: string; readonly waitable: boolean },
  call: RefusedCall,
): "static-fallback" | "wait" | "stand-aside" {
  if (call.cannotWait && call.hasStaticBinding && refusal.reason !== "prompt-too-large") {
    return "static-fallback";
  }
  if (refusal.waitable && call.phase !== "triage" && !call.cannotWait && call.waitLimitS > 0) return "wait";
  return "stand-aside";
}

/** What a finished call reported about its prompt. */
export interface PromptReport {
  /** Characters of the prompt that was sent; 0 = not known. */
  promptChars: number;
  /** Prompt tokens the engine reported evaluating; 0 = not reported. */
  reportedTokens: number;
  /** The context (num_ctx) the call ran with, when known. */
  contextSent?: number | undefined;
  /** The learned ratio; only a learned one (from long reports) judges a shortfall. */
  ratio?: CharsPerToken;
}

/**
 * Whether the engine cut the prompt, judged from its own count: it filled the context the call
 * ran with (the runner's token-level cut evaluates exactly that many); or it counted fewer
 * tokens than the prompt could be at any plausible ratio; or, once a ratio has been learned,
 * less than half of what that ratio expects (whole messages dropped). A count between those
 * bounds cannot be told from an estimate's error, so it is not called a cut.
 */
export function judgeTruncation(r: PromptReport): boolean {
  if (!(r.reportedTokens > 0)) return false;
  if (r.contextSent !== undefined && r.contextSent > 0 && r.reportedTokens >= r.contextSent) return true;
  if (!(r.promptChars > 0)) return false;
  if (r.reportedTokens < r.promptChars / CHARS_PER_TOKEN_MAX) return true;
  return (
    r.ratio?.learned === true && r.reportedTokens < estimateTokens(r.promptChars, r.ratio) * TRUNCATION_RATIO
  );
}

/**
 * How a call ended, as its caller reports it. "unspecified" (not reported) is neutral: it
 * never counts against a provider, so a caller that forgets the outcome cannot open a circuit.
 */
export type CallOutcome = "succeeded" | "failed" | "unspecified";

/** A finished call as the provider's health learns from it. */
export interface CallResult {
  model: string;
  outcome: CallOutcome;
  /** The call's latency (ms); 0 = not measured. */
  latencyMs: number;
  /** Of that, the engine's load time (ms); 0 or absent = warm or unknown. */
  loadMs?: number;
  /** The model's footprint (MiB), to learn the load rate from a cold call. */
  footprintMiB?: number;
  coldLoad?: boolean;
  /** Prompt tokens the engine reported, the share it reused from its cache, and its prefill time (ms). */
  promptTokens?: number;
  cachedTokens?: number;
  promptEvalMs?: number;
}

/**
 * A provider's health after one call that ran there: the circuit breaker (a failure counts, a
 * success closes it), the per-model success rate and the latency EMA (successes only). An
 * unspecified outcome changes nothing.
 */
export function learnFromCall(
  h: ProviderHealth | undefined,
  call: CallResult,
  nowMs: number,
): ProviderHealth {
  const prev = h ?? {};
  if (call.outcome === "unspecified") return prev;
  const success = call.outcome === "succeeded";
  const circuit = success
    ? recordSuccess(prev.circuit ?? CLOSED_CIRCUIT)
    : recordFailure(prev.circuit ?? CLOSED_CIRCUIT, nowMs);
  const successByModel = new Map(prev.successByModel ?? []);
  successByModel.set(
    call.model,
    recordOutcome(successByModel.get(call.model) ?? NO_SUCCESS_SAMPLES, success),
  );
  const latencyEmaMs =
    success && call.latencyMs > 0 ? recordLatency(prev.latencyEmaMs, call.latencyMs) : prev.latencyEmaMs;
  const next: ProviderHealth = {
    circuit,
    successByModel,
    ...(latencyEmaMs !== undefined ? { latencyEmaMs } : {}),
  };
  const loadMs = call.loadMs !== undefined && call.loadMs > 0 ? call.loadMs : 0;
  let serviceByModel = prev.serviceByModel;
  if (success && call.latencyMs > 0) {
    const m = new Map(serviceByModel ?? []);
    m.set(call.model, recordLatency(m.get(call.model), Math.max(0, call.latencyMs - loadMs)) ?? 0);
    serviceByModel = m;
  }
  if (serviceByModel !== undefined) next.serviceByModel = serviceByModel;
  let loadMiBPerS = prev.loadMiBPerS;
  const F = call.footprintMiB ?? 0;
  if (success && call.coldLoad === true && loadMs > 0 && F > 0) {
    loadMiBPerS = recordLatency(loadMiBPerS, F / (loadMs / 1000));
  }
  if (loadMiBPerS !== undefined) next.loadMiBPerS = loadMiBPerS;
  // The prefill rate, from the tokens the engine evaluated (not those it reused) and its time.
  let prefillByModel = prev.prefillByModel;
  const evaluated = (call.promptTokens ?? 0) - (call.cachedTokens ?? 0);
  const promptMs = call.promptEvalMs ?? 0;
  if (success && evaluated >= MIN_PREFILL_SAMPLE_TOKENS && promptMs > 0) {
    const m = new Map(prefillByModel ?? []);
    m.set(call.model, recordLatency(m.get(call.model), evaluated / (promptMs / 1000)) ?? 0);
    prefillByModel = m;
  }
  if (prefillByModel !== undefined) next.prefillByModel = prefillByModel;
  return next;
}
