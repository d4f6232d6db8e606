// A service whose implementation arrives after its port listens (docs/deploy.md "Start-up and
// readiness"): the API port serves health and readiness while the shared state opens, and each
// RPC of the service answers `notYet()`'s error (UNAVAILABLE) until the implementation is set.
import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";

type Handler = (...args: unknown[]) => unknown;

/** `service`'s handlers, each delegating to `current()`, or throwing `notYet()` while it is undefined. */
export function lateService<S extends DescService>(
  service: S,
  current: () => ServiceImpl<S> | undefined,
  notYet: () => Error,
): ServiceImpl<S> {
  const handlers: Record<string, Handler> = {};
  for (const m of service.methods) {
    const name = m.localName;
    const handler = (): Handler => {
      const impl = current() as Record<string, Handler> | undefined;
      if (impl === undefined) throw notYet();
      return impl[name]!.bind(impl);
    };
    handlers[name] =
      m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming"
        ? async function* (...args: unknown[]) {
            yield* handler()(...args) as AsyncIterable<unknown>;
          }
        : async (...args: unknown[]) => handler()(...args);
  }
  return handlers as ServiceImpl<S>;
}
