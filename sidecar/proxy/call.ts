// One proxied inference call, end to end, as named stages over one call state (call-state.ts):
//   parse    the body and the X-Kubemoot-* headers                       parse.ts
//   place    the states, the estimate, Scheduler.acquire (waiting while
//            the GPUs are busy), a refusal answered                      place.ts
//   fit      embedding inputs, the OpenAI context, num_ctx               fit.ts
//   forward  to the placed provider, buffered or streamed back           forward.ts
//   release  the ticket, with the outcome, in a finally path            release.ts
// Every wait of the call is awaited here; an error any stage throws is answered once, by the
// call state, in the wire table's shape (src/errors/wire.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import { context } from "@opentelemetry/api";
import { KubemootError } from "../../src/errors/index.js";
import { parseJsonObject, readBody } from "./body.js";
import type { CallContext } from "./call-context.js";
import { startCallSpan } from "./call-span.js";
import { type PlacedCall, ProxyCall } from "./call-state.js";
import { fitCall } from "./fit.js";
import { forwardCall } from "./forward.js";
import { parseCall } from "./parse.js";
import { placed, placeInput, readStates } from "./place.js";
import { releaseCall } from "./release.js";
import type { Api } from "./validate.js";

/** Placements a call gets when its provider refuses or resets the connection before answering. */
const UNREACHABLE_ATTEMPTS = 2;

export async function handleCall(
  ctx: CallContext,
  api: Api,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const traced = startCallSpan(req, api);
  const call = new ProxyCall(ctx, api, req, res, traced.span);
  // Every stage runs in the call's trace context: the placement and the engine's request are its children.
  await context.with(traced.ctx, () => runCall(call));
}

async function runCall(call: ProxyCall): Promise<void> {
  const { ctx, api, req } = call;
  try {
    const parsed = parseCall(call, parseJsonObject(await readBody(req, ctx.settings.maxBodyBytes)));
    if (!parsed) return;
    const s = readStates(ctx);
    const states = s instanceof Promise ? await s : s;
    const input = placeInput(call, parsed.request, parsed.headers, states);
    // A provider that refuses the connection never saw the call: it is placed once more (the
    // scheduler no longer chooses the unreachable provider), so the client is not the one to
    // find out that a GPU server died.
    for (let attempt = 0; attempt < UNREACHABLE_ATTEMPTS; attempt++) {
      const acquired = await ctx.scheduler.acquire(input, call.signal, ctx.settings.waitLimitS);
      const p = placed(call, parsed.request, states, acquired);
      if (!p) return;
      if ((await runPlaced(p, attempt + 1 < UNREACHABLE_ATTEMPTS)) === "done") return;
      ctx.logger.warn(
        { provider: p.placement.provider },
        "proxy: provider unreachable, placing the call again",
      );
    }
  } catch (err) {
    if (!KubemootError.is(err)) ctx.logger.error({ err, api }, "proxy: unexpected failure");
    call.fail(KubemootError.from(err));
  } finally {
    call.finish();
  }
}

/** Fit, forward and release one placement; "retry" when its provider could not be reached. */
async function runPlaced(p: PlacedCall, mayRetry: boolean): Promise<"done" | "retry"> {
  const { scheduler, settings, logger } = p.call.ctx;
  const ticket = p.placement.ticketId;
  const renew = p.placement.staticFallback
    ? undefined
    : setInterval(() => {
        scheduler.renew(ticket, scheduler.config.leaseS).catch((err) => {
          logger.warn({ err, ticket }, "proxy: renewing the ticket failed");
        });
      }, settings.renewEveryMs);
  renew?.unref();
  try {
    const fit = fitCall(p);
    p.refused = fit instanceof Promise ? await fit : fit;
    if (p.refused) {
      p.call.fail(p.refused, p.attribution);
      return "done";
    }
    return await forwardCall(p, mayRetry);
  } finally {
    p.exact.release();
    if (renew) clearInterval(renew);
    await releaseCall(p);
  }
}
