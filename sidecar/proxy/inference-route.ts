// The door of every inference call (server.ts routes them here): refused while draining, counted
// in flight, and held until its body fits the proxy's body budget (body-budget.ts, README.md
// "Memory"); then handled (call.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { ByteBudget } from "./body-budget.js";
import { handleCall } from "./call.js";
import type { CallContext } from "./call-context.js";
import { sendError, shapeOfPath } from "./http-errors.js";
import type { CallsInFlight } from "./in-flight.js";
import type { Api } from "./validate.js";

export interface InferenceDoor {
  ctx: CallContext;
  calls: CallsInFlight;
  bodyBudget: ByteBudget;
  /** Aborted when the proxy shuts down. */
  shutdown: AbortSignal;
  draining: () => boolean;
}

const SHUTTING_DOWN_HEADERS = { connection: "close", "retry-after": "1" };

function shuttingDown(): KubemootError {
  return new KubemootError(ErrorCode.ShuttingDown, "the sidecar is shutting down");
}

/** The bytes a body takes from the budget: its declared length, the limit when it declares none. */
function bodyBytes(req: IncomingMessage, maxBytes: number): number {
  const declared = Number(req.headers["content-length"]);
  if (!Number.isFinite(declared)) return maxBytes;
  // A body declared over the limit is refused before it is read, so it takes none.
  return declared > maxBytes ? 0 : declared;
}

export function serveInference(
  door: InferenceDoor,
  api: Api,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const shape = shapeOfPath(path);
  if (door.draining()) {
    req.resume();
    sendError(res, shuttingDown(), SHUTTING_DOWN_HEADERS, shape);
    return;
  }
  const { ctx } = door;
  door.calls.track(() => {
    const gone = new AbortController();
    res.once("close", () => gone.abort(new KubemootError(ErrorCode.Canceled, "the client went away")));
    return door.bodyBudget
      .acquire(bodyBytes(req, ctx.settings.maxBodyBytes), AbortSignal.any([gone.signal, door.shutdown]))
      .then(
        (release) => handleCall(ctx, api, req, res).finally(release),
        () => {
          // The client left, or the sidecar is shutting down, while the call waited its turn.
          if (!res.headersSent && !res.destroyed)
            sendError(res, shuttingDown(), SHUTTING_DOWN_HEADERS, shape);
        },
      )
      .catch((err: unknown) => {
        ctx.logger.error({ err }, "proxy: call handler failed");
        sendError(res, new KubemootError(ErrorCode.Internal, "internal error"), {}, shape);
      });
  });
}
