// A TypeScript client of the sidecar: the generated SchedulerService descriptor with a
// connect-es client over gRPC (HTTP/2). `withTicket` wraps one inference call: place (waiting
// for capacity when every GPU is busy), run the caller's function on the placement, release
// with the outcome whatever happens.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  type Placement,
  type Refusal,
  Refusal_Reason,
  CallOutcome as ReleaseOutcome,
  ReleaseRequestSchema,
  SchedulerService,
  type WaitRequestSchema,
} from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";

export type SchedulerClient = Client<typeof SchedulerService>;

/** A client for the sidecar at `baseUrl` (default http://127.0.0.1:50051). */
export function schedulerClient(baseUrl = "http://127.0.0.1:50051"): SchedulerClient {
  return createClient(SchedulerService, createGrpcTransport({ baseUrl }));
}

export class RefusedError extends Error {
  constructor(readonly refusal: Refusal) {
    super(`${Refusal_Reason[refusal.reason]}: ${refusal.message}`);
    this.name = "RefusedError";
  }
}

export interface CallOutcome<T> {
  result: T;
  promptTokens?: number;
  outputTokens?: number;
}

/**
 * Places a call (Wait: it waits when every GPU is busy), runs `fn` on the placement, and
 * releases the ticket with the outcome — also when `fn` throws.
 */
export async function withTicket<T>(
  client: SchedulerClient,
  request: MessageInitShape<typeof WaitRequestSchema>,
  fn: (placement: Placement) => Promise<CallOutcome<T>>,
): Promise<T> {
  let placement: Placement | undefined;
  for await (const ev of client.wait(request)) {
    if (ev.event.case === "placed") placement = ev.event.value;
    if (ev.event.case === "standAside") throw new RefusedError(ev.event.value);
  }
  if (!placement) throw new Error("the Wait stream ended without a placement");
  const started = Date.now();
  try {
    const out = await fn(placement);
    await client.release(
      create(ReleaseRequestSchema, {
        ticketId: placement.ticketId,
        outcome: ReleaseOutcome.SUCCEEDED,
        latencyMs: BigInt(Date.now() - started),
        promptTokens: BigInt(out.promptTokens ?? 0),
        outputTokens: BigInt(out.outputTokens ?? 0),
      }),
    );
    return out.result;
  } catch (err) {
    await client.release({
      ticketId: placement.ticketId,
      outcome: ReleaseOutcome.FAILED,
      latencyMs: BigInt(Date.now() - started),
      error: err instanceof Error ? err.message : String(err),
    });
    throw err;
  }
}
