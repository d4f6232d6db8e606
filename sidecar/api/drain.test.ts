// Shutting the API down, as a grpc-js client sees it: streams end with UNAVAILABLE at once, a
// unary call in flight still gets its answer, the port stops taking connections, and a call
// that never ends is cut after the drain period.
import type { ServiceImpl } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import type { SchedulerService } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { type Json, schedulerClient } from "../../test/helpers/grpc-client.js";
import { startApiServer } from "./server.js";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("close", () => {
  it("ends streams with UNAVAILABLE, lets a unary call in flight finish, then stops listening", async () => {
    const placeEntered = deferred();
    const placeMayAnswer = deferred();
    const api = await startApiServer({
      host: "127.0.0.1",
      port: 0,
      impl: {
        async place() {
          placeEntered.resolve();
          await placeMayAnswer.promise;
          return { result: { case: "placement", value: { ticketId: "drained" } } };
        },
        async *wait(_req, ctx) {
          yield { event: { case: "waiting", value: {} } };
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
          ctx.signal.throwIfAborted();
        },
      } as Partial<ServiceImpl<typeof SchedulerService>> as ServiceImpl<typeof SchedulerService>,
    });
    const client = schedulerClient(api.address);
    const waiting: Json[] = [];
    const stream = client.stream("Wait", {}, (m) => waiting.push(m));
    await expect.poll(() => waiting.length).toBe(1);
    const placed = client.call("Place", {});
    await placeEntered.promise;

    const closed = api.close();
    await expect(stream.done).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    placeMayAnswer.resolve();
    expect((await placed).placement.ticketId).toBe("drained");
    await closed;
    client.close();

    const late = schedulerClient(api.address);
    await expect(
      new Promise((resolve, reject) =>
        (late.raw as Json).Place({}, { deadline: Date.now() + 2000 }, (e: Error | null) =>
          e ? reject(e) : resolve(e),
        ),
      ),
    ).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    late.close();
  });

  it("cuts a call that does not end within the drain period", async () => {
    const entered = deferred();
    const api = await startApiServer({
      host: "127.0.0.1",
      port: 0,
      impl: {
        async place() {
          entered.resolve();
          return new Promise(() => undefined); // never answers
        },
      } as Partial<ServiceImpl<typeof SchedulerService>> as ServiceImpl<typeof SchedulerService>,
    });
    const client = schedulerClient(api.address);
    const placed = client.call("Place", {});
    await entered.promise;
    await api.close();
    await expect(placed).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    client.close();
  }, 20_000);
});
