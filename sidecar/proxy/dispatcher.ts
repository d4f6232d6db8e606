// The proxy's one undici dispatcher towards the providers: a keep-alive pool whose every request
// (calls, /api/show, tokenizer counts) must go to an origin inside the endpoint allowlist.
import { Agent, type Dispatcher } from "undici";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { EndpointAllowlist } from "../../src/net/index.js";
import { SETTINGS } from "../../src/settings/index.js";
import type { ProxySettings } from "./options.js";

/**
 * Refuses, before any connection, a request to an origin outside the endpoint allowlist. Defence
 * in depth: such providers are already kept out of the scheduler's view.
 */
function allowedOrigins(list: EndpointAllowlist | undefined): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    if (list !== undefined && !list.allows(String(opts.origin ?? ""))) {
      throw new KubemootError(
        ErrorCode.ProviderFailure,
        `provider endpoint not in ${SETTINGS.providerEndpoints.name}: nothing was sent`,
      );
    }
    return dispatch(opts, handler);
  };
}

export function providerDispatcher(settings: ProxySettings, allowlist: EndpointAllowlist | undefined) {
  return new Agent({
    connect: { timeout: settings.connectTimeoutMs },
    keepAliveTimeout: 10_000,
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
  }).compose(allowedOrigins(allowlist));
}
