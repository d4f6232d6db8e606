// W3C trace context over HTTP and gRPC headers (docs/tracing.md "Propagation"): what an incoming
// request carries is continued, and every request to an engine carries ours. Through the
// globally registered propagator (W3C trace context and baggage once tracing is started; none,
// so nothing read or written, when it is off). A malformed `traceparent` is ignored by the
// propagator: the call starts a new trace.
import { type Context, context, propagation, ROOT_CONTEXT } from "@opentelemetry/api";

type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

const getter = {
  keys: (h: HeaderBag) => Object.keys(h),
  get: (h: HeaderBag, key: string) => {
    const v = h[key.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  },
};

/** The context an incoming request's headers (node's lower-cased bag) carry, over the root. */
export function contextFromHeaders(headers: HeaderBag): Context {
  return propagation.extract(ROOT_CONTEXT, headers, getter);
}

/** The context a Fetch-style `Headers` carries (connect's requests). */
export function contextFromFetchHeaders(headers: Headers): Context {
  return propagation.extract(ROOT_CONTEXT, headers, {
    keys: (h: Headers) => [...h.keys()],
    get: (h: Headers, key: string) => h.get(key) ?? undefined,
  });
}

/** `headers` plus what the active (or given) context propagates: `traceparent`, `tracestate`. */
export function withTraceHeaders(
  headers: Record<string, string>,
  ctx: Context = context.active(),
): Record<string, string> {
  propagation.inject(ctx, headers);
  return headers;
}
