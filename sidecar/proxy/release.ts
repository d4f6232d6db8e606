// The release stage of a placed call: release its ticket with what the call told the proxy (its
// outcome, the engine's counts, the context it ran with), and report a cut prompt the
// scheduler's judgement found (README.md in this folder, "Release outcomes", "Silent truncation").
import type { CallOutcome } from "../../src/core/index.js";
import type { PlacedCall } from "./call-state.js";
import { EMBED_APIS } from "./validate.js";

interface Verdict {
  result: CallOutcome;
  /** The provider ran the call (so it says something about the provider). */
  ran: boolean;
  unreachable: boolean;
  latencyMs: number;
  error: string;
}

/**
 * What to tell the scheduler. A call never forwarded (or rejected as the caller's fault, or left
 * by its client before any answer) says nothing about the provider: it is released as not run,
 * so it neither counts as a failure nor records the model resident.
 */
function verdict(p: PlacedCall): Verdict {
  const { outcome, refused } = p;
  if (!outcome || refused) {
    const error = refused ? `not forwarded: ${refused.message}` : "not forwarded";
    return { result: "unspecified", ran: false, unreachable: false, latencyMs: 0, error };
  }
  switch (outcome.kind) {
    case "ok":
      return { result: "succeeded", ran: true, unreachable: false, latencyMs: outcome.latencyMs, error: "" };
    case "failed":
      return {
        result: "failed",
        ran: outcome.providerFault,
        unreachable: outcome.unreachable === true,
        latencyMs: 0,
        error: outcome.error.message,
      };
    case "broken":
      return {
        result: "failed",
        ran: true,
        unreachable: outcome.unreachable === true,
        latencyMs: 0,
        error: outcome.message,
      };
    case "client-gone":
      // The provider did nothing wrong; a partial call says nothing about latency.
      return {
        result: outcome.answered ? "succeeded" : "unspecified",
        ran: outcome.answered,
        unreachable: false,
        latencyMs: 0,
        error: "client went away",
      };
  }
}

/** Releases the ticket with what the call told; reports a silent cut. Never throws. */
export async function releaseCall(p: PlacedCall): Promise<void> {
  const { call, request, placement, outcome, numCtx } = p;
  const { scheduler, logger } = call.ctx;
  const report = outcome && (outcome.kind === "ok" || outcome.kind === "broken") ? outcome.report : undefined;
  p.promptTokens = report?.promptTokens ?? 0;
  p.outputTokens = report?.outputTokens ?? 0;
  p.cachedPromptTokens = report?.cachedTokens ?? 0;
  // A batch's count covers every input, so it says nothing about filling one input's context.
  const sentCtx =
    numCtx && numCtx.kind !== "refuse" && !EMBED_APIS.has(request.api) ? numCtx.value : undefined;
  const v = verdict(p);
  try {
    await scheduler.release({
      ticketId: placement.ticketId,
      outcome: v.result,
      ran: v.ran,
      latencyMs: Math.round(v.latencyMs),
      promptTokens: p.promptTokens,
      promptChars: request.learnChars ?? request.promptChars,
      outputTokens: p.outputTokens,
      cachedPromptTokens: p.cachedPromptTokens,
      promptEvalMs: Math.round(report?.promptEvalMs ?? 0),
      loadMs: Math.round(report?.loadMs ?? 0),
      providerUnreachable: v.unreachable,
      error: v.error,
      ...(sentCtx !== undefined ? { contextSent: sentCtx } : {}),
    });
  } catch (err) {
    logger.error(
      { err, ticket: placement.ticketId },
      "proxy: releasing the ticket failed (its lease will reclaim it)",
    );
  }
  // The scheduler judged the call (Attribute reports the same verdict).
  p.truncated = scheduler.attribute(placement.ticketId)?.truncated ?? false;
  if (p.truncated) reportTruncation(p, sentCtx);
}

function reportTruncation(p: PlacedCall, numCtx: number | undefined): void {
  const { call, placement } = p;
  const { logger, hooks } = call.ctx;
  const estimated = call.estimate.tokens;
  logger.warn(
    {
      ticket: placement.ticketId,
      provider: placement.provider,
      model: placement.model,
      estimated,
      reported: p.promptTokens,
      num_ctx: numCtx,
    },
    "proxy: the engine's own prompt count shows it cut the prompt (silent truncation)",
  );
  try {
    hooks.onTruncation?.({
      ticketId: placement.ticketId,
      provider: placement.provider,
      model: placement.model,
      estimatedPromptTokens: estimated,
      reportedPromptTokens: p.promptTokens,
      numCtx,
    });
  } catch (err) {
    logger.warn({ err }, "proxy: onTruncation hook failed");
  }
}
