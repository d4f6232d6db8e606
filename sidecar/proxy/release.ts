// The end of a placed proxied call: release its ticket with what the call told the proxy (its
// outcome, the engine's counts, the context it ran with), and report a cut prompt the
// scheduler's judgement found.
import type { CallOutcome } from "../../src/core/index.js";
import type { PlacementOut } from "../../src/scheduler/index.js";
import type { CallContext } from "./call.js";
import type { ForwardOutcome } from "./forward.js";
import type { ProxyError } from "./http-errors.js";
import type { NumCtxDecision } from "./num-ctx.js";
import type { CallRecord } from "./options.js";
import { type CallRequest, EMBED_APIS } from "./validate.js";

/** Releases the ticket with what the call told; reports a silent cut. Never throws. */
export async function releaseCall(
  ctx: CallContext,
  call: CallRequest,
  tokens: number,
  p: PlacementOut,
  outcome: ForwardOutcome | undefined,
  refused: ProxyError | undefined,
  record: CallRecord,
  numCtx: NumCtxDecision | undefined,
): Promise<void> {
  const { scheduler, logger, hooks } = ctx;
  const report = outcome && (outcome.kind === "ok" || outcome.kind === "broken") ? outcome.report : undefined;
  const reported = report?.promptTokens ?? 0;
  record.promptTokens = reported;
  record.outputTokens = report?.outputTokens ?? 0;
  // A batch's count covers every input, so it says nothing about filling one input's context.
  const sentCtx = numCtx && numCtx.kind !== "refuse" && !EMBED_APIS.has(call.api) ? numCtx.value : undefined;
  // What to tell the scheduler. A call never forwarded (or rejected as the caller's fault, or
  // left by its client before any answer) says nothing about the provider: it is released as
  // not run, so it neither counts as a failure nor records the model resident.
  let result: CallOutcome;
  let ran = true;
  let unreachable = false;
  let latencyMs = 0;
  let error = "";
  if (!outcome || refused) {
    result = "unspecified";
    ran = false;
    error = refused ? `not forwarded: ${refused.message}` : "not forwarded";
  } else {
    switch (outcome.kind) {
      case "ok":
        result = "succeeded";
        latencyMs = outcome.latencyMs;
        break;
      case "failed":
        result = "failed";
        ran = outcome.providerFault;
        error = outcome.error.message;
        unreachable = outcome.unreachable === true;
        break;
      case "broken":
        result = "failed";
        error = outcome.message;
        unreachable = outcome.unreachable === true;
        break;
      case "client-gone":
        // The provider did nothing wrong; a partial call says nothing about latency.
        result = outcome.answered ? "succeeded" : "unspecified";
        ran = outcome.answered;
        error = "client went away";
        break;
    }
  }
  try {
    await scheduler.release({
      ticketId: p.ticketId,
      outcome: result,
      ran,
      latencyMs: Math.round(latencyMs),
      promptTokens: reported,
      promptChars: call.learnChars ?? call.promptChars,
      outputTokens: report?.outputTokens ?? 0,
      loadMs: Math.round(report?.loadMs ?? 0),
      providerUnreachable: unreachable,
      error,
      ...(sentCtx !== undefined ? { contextSent: sentCtx } : {}),
    });
  } catch (err) {
    logger.error(
      { err, ticket: p.ticketId },
      "proxy: releasing the ticket failed (its lease will reclaim it)",
    );
  }
  // The scheduler judged the call (Attribute reports the same verdict).
  const truncated = scheduler.attribute(p.ticketId)?.truncated ?? false;
  record.truncated = truncated;
  if (truncated) {
    logger.warn(
      {
        ticket: p.ticketId,
        provider: p.provider,
        model: p.model,
        estimated: tokens,
        reported,
        num_ctx: sentCtx,
      },
      "proxy: the engine's own prompt count shows it cut the prompt (silent truncation)",
    );
    try {
      hooks.onTruncation?.({
        ticketId: p.ticketId,
        provider: p.provider,
        model: p.model,
        estimatedPromptTokens: tokens,
        reportedPromptTokens: reported,
        numCtx: sentCtx,
      });
    } catch (err) {
      logger.warn({ err }, "proxy: onTruncation hook failed");
    }
  }
}
