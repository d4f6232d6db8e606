// grpc.health.v1.Health (Check, Watch, List), served from the generated service like the rest of
// the API: what the kubelet's gRPC probes and grpc_health_probe ask.
import type { ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Health as HealthService,
  HealthCheckResponse_ServingStatus as Status,
} from "../../src/gen/grpc/health/v1/health_pb.js";

export type ServingStatus = "SERVING" | "NOT_SERVING";

export interface Health {
  readonly impl: ServiceImpl<typeof HealthService>;
  setStatus(service: string, status: ServingStatus): void;
}

/** A health service knowing `initial`'s services (the empty name is the server as a whole). */
export function createHealth(initial: Record<string, ServingStatus>): Health {
  const statuses = new Map<string, Status>(Object.entries(initial).map(([s, v]) => [s, Status[v]]));
  // Settled (and replaced) on every change, whichever service changed.
  let wake = (): void => undefined;
  let changed = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const impl: ServiceImpl<typeof HealthService> = {
    check(req) {
      const status = statuses.get(req.service);
      if (status === undefined) throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
      return { status };
    },
    async *watch(req, ctx) {
      const current = () => statuses.get(req.service) ?? Status.SERVICE_UNKNOWN;
      const aborted = new Promise<void>((resolve) =>
        ctx.signal.addEventListener("abort", () => resolve(), { once: true }),
      );
      let last = current();
      yield { status: last };
      for (;;) {
        await Promise.race([changed, aborted]);
        // A shutdown ends the stream with its reason (UNAVAILABLE): a prober then retries
        // elsewhere; a client that cancelled is gone anyway.
        ctx.signal.throwIfAborted();
        if (current() !== last) {
          last = current();
          yield { status: last };
        }
      }
    },
    list() {
      const out: Record<string, { status: Status }> = {};
      for (const [service, status] of statuses) out[service] = { status };
      return { statuses: out };
    },
  };
  return {
    impl,
    setStatus(service, status) {
      if (statuses.get(service) === Status[status]) return;
      statuses.set(service, Status[status]);
      const woken = wake;
      changed = new Promise<void>((resolve) => {
        wake = resolve;
      });
      woken();
    },
  };
}
