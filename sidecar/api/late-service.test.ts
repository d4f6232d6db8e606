// The scheduler service before and after its implementation arrives (docs/deploy.md "Start-up
// and readiness"): every RPC, streams included, answers the not-yet error, then delegates.
import type { ServiceImpl } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SchedulerService } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { lateService } from "./late-service.js";

type Impl = ServiceImpl<typeof SchedulerService>;
const notYet = () => new Error("not open yet");

describe("lateService", () => {
  it("answers the not-yet error on every RPC until the implementation is set", async () => {
    let impl: Impl | undefined;
    const late = lateService(SchedulerService, () => impl, notYet) as unknown as Record<
      string,
      (...a: unknown[]) => unknown
    >;
    expect(Object.keys(late).sort()).toEqual(SchedulerService.methods.map((m) => m.localName).sort());
    await expect(late.place!({}, {})).rejects.toThrow("not open yet");
    const stream = late.wait!({}, {}) as AsyncIterable<unknown>;
    await expect(
      (async () => {
        for await (const _ of stream) return;
      })(),
    ).rejects.toThrow("not open yet");

    impl = {
      place: async () => ({ result: { case: undefined } }),
      async *wait() {
        yield { event: { case: undefined } };
      },
    } as unknown as Impl;
    await expect(late.place!({}, {})).resolves.toEqual({ result: { case: undefined } });
    const events: unknown[] = [];
    for await (const ev of late.wait!({}, {}) as AsyncIterable<unknown>) events.push(ev);
    expect(events).toEqual([{ event: { case: undefined } }]);
  });
});
