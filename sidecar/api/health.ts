// grpc.health.v1.Health (Check, Watch, List) on the lean gRPC server. Its three messages are
// small enough to encode by hand with protobuf-es's wire helpers, which keeps grpc-js and
// protobufjs out of the sidecar process.
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { GrpcCode, type GrpcMethod, GrpcStatusError, malformedMessage } from "./grpc/index.js";

export type ServingStatus = "SERVING" | "NOT_SERVING";
const STATUS_NUMBER = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

export const HEALTH_SERVICE = "grpc.health.v1.Health";

export interface Health {
  setStatus(service: string, status: ServingStatus): void;
  readonly methods: Map<string, GrpcMethod>;
}

/** A health service knowing `initial`'s services (the empty name is the server as a whole). */
export function createHealth(initial: Record<string, ServingStatus>): Health {
  const statuses = new Map(Object.entries(initial));
  const watchers = new Set<(service: string) => void>();
  const methods = new Map<string, GrpcMethod>([
    [
      `/${HEALTH_SERVICE}/Check`,
      {
        kind: "unary",
        handle: (bytes) => {
          const service = decodeRequest(bytes);
          const status = statuses.get(service);
          if (status === undefined)
            throw new GrpcStatusError(GrpcCode.NOT_FOUND, `unknown service "${service}"`);
          return encodeResponse(STATUS_NUMBER[status]);
        },
      },
    ],
    [
      `/${HEALTH_SERVICE}/Watch`,
      {
        kind: "server_streaming",
        handle: async (bytes, call, send) => {
          const service = decodeRequest(bytes);
          const current = () => STATUS_NUMBER[statuses.get(service) ?? "SERVICE_UNKNOWN"];
          let last = current();
          let wake: (() => void) | undefined;
          const onChange = (changed: string) => {
            if (changed === service) wake?.();
          };
          watchers.add(onChange);
          const onAbort = () => wake?.();
          call.signal.addEventListener("abort", onAbort, { once: true });
          try {
            await send(encodeResponse(last));
            while (!call.signal.aborted) {
              if (current() === last) {
                await new Promise<void>((resolve) => {
                  wake = resolve;
                });
              }
              const now = current();
              if (!call.signal.aborted && now !== last) {
                last = now;
                await send(encodeResponse(now));
              }
            }
          } finally {
            watchers.delete(onChange);
            call.signal.removeEventListener("abort", onAbort);
          }
        },
      },
    ],
    [
      `/${HEALTH_SERVICE}/List`,
      {
        kind: "unary",
        handle: () => {
          const w = new BinaryWriter();
          for (const [service, status] of statuses) {
            // map<string, HealthCheckResponse> statuses = 1: one entry message per service.
            w.tag(1, WireType.LengthDelimited).fork();
            w.tag(1, WireType.LengthDelimited).string(service);
            w.tag(2, WireType.LengthDelimited).bytes(encodeResponse(STATUS_NUMBER[status]));
            w.join();
          }
          return w.finish();
        },
      },
    ],
  ]);
  return {
    methods,
    setStatus(service, status) {
      if (statuses.get(service) === status) return;
      statuses.set(service, status);
      for (const w of watchers) w(service);
    },
  };
}

function decodeRequest(bytes: Uint8Array): string {
  let service = "";
  try {
    const r = new BinaryReader(bytes);
    while (r.pos < r.len) {
      const [field, wireType] = r.tag();
      if (field === 1 && wireType === WireType.LengthDelimited) service = r.string();
      else r.skip(wireType);
    }
  } catch (err) {
    throw malformedMessage("grpc.health.v1.HealthCheckRequest", err);
  }
  return service;
}

function encodeResponse(status: number): Uint8Array {
  const w = new BinaryWriter();
  if (status !== 0) w.tag(1, WireType.Varint).int32(status);
  return w.finish();
}
