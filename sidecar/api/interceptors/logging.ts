// Logs calls that failed: a bug (INTERNAL, UNKNOWN) at error level with its cause, any other
// status at debug. Request and response messages are never logged.
import { Code } from "@connectrpc/connect";
import type { Logger } from "pino";
import { observeCalls } from "./outcome.js";

export function loggingInterceptor(log: Logger) {
  return observeCalls((req) => (err) => {
    if (err === undefined) return;
    const method = req.method.name;
    // A call the client cancelled or let expire ends with whatever its handler threw then.
    if ((err.code === Code.Internal || err.code === Code.Unknown) && !req.signal.aborted) {
      log.error({ err: err.cause ?? err, method }, "internal error in handler");
    } else if (log.isLevelEnabled("debug")) {
      log.debug({ method, code: Code[err.code], message: err.rawMessage }, "call failed");
    }
  });
}
