// Who is calling. The sidecar runs in its agent's pod and listens on localhost, so the caller
// is the agent it was configured for (--agent). The identity interceptor puts that agent into
// every call's context values, where handlers read it with `ctx.values.get(callerAgent)`.
// The check that a request acts for this agent only is the Scheduler's (assertServes), so that
// the proxy runs it too (docs/rules/identity.md).
import { createContextKey, type Interceptor } from "@connectrpc/connect";

/** The calling agent ("namespace/name"); empty when the sidecar has no agent configured. */
export const callerAgent = createContextKey<string>("", { description: "the agent calling" });

export function identityInterceptor(agent: string): Interceptor {
  return (next) => (req) => {
    req.contextValues.set(callerAgent, agent);
    return next(req);
  };
}
