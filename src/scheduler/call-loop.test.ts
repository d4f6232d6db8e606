// settleLoop: the call loop's end as the proxy and the simulation see it, over scripted events.
import { expect, it } from "vitest";
import { settleLoop } from "./call-loop.js";
import type { PlacementOut, RefusalOut, WaitEventOut } from "./types.js";

const placement = { ticketId: "t1", provider: "gpu", model: "m" } as PlacementOut;
const refusal = { reason: "gpu-busy", model: "m", message: "busy", waitable: true } as RefusalOut;

async function* events(list: WaitEventOut[], clock: { t: number }, stepMs: number) {
  for (const ev of list) {
    clock.t += stepMs;
    yield ev;
  }
}

it("a call decided by its first attempt waited 0 ms, whatever the attempt took", async () => {
  const clock = { t: 1000 };
  const now = () => clock.t;
  const given: PlacementOut[] = [];
  const back = async (p: PlacementOut) => void given.push(p);
  const signal = new AbortController().signal;
  const placed = await settleLoop(events([{ kind: "placed", placement }], clock, 7), signal, now, back);
  expect(placed).toEqual({ kind: "placed", placement, queueWaitMs: 0 });
  const refused = await settleLoop(events([{ kind: "stand-aside", refusal }], clock, 7), signal, now, back);
  expect(refused).toEqual({ kind: "refused", refusal, waitedMs: 0 });
  expect(given).toEqual([]);
});

it("a call that waited reports the time from its start to its end", async () => {
  const clock = { t: 0 };
  const signal = new AbortController().signal;
  const out = await settleLoop(
    events(
      [
        { kind: "waiting", refusal, deadlineMs: 90_000 },
        { kind: "placed", placement },
      ],
      clock,
      250,
    ),
    signal,
    () => clock.t,
    async () => undefined,
  );
  expect(out).toEqual({ kind: "placed", placement, queueWaitMs: 500 });
});

it("a placement that lands after the caller left is given back, and the call is aborted", async () => {
  const clock = { t: 0 };
  const ctl = new AbortController();
  ctl.abort();
  const given: PlacementOut[] = [];
  const out = await settleLoop(
    events(
      [
        { kind: "waiting", refusal, deadlineMs: 1 },
        { kind: "placed", placement },
      ],
      clock,
      10,
    ),
    ctl.signal,
    () => clock.t,
    async (p) => void given.push(p),
  );
  expect(out).toEqual({ kind: "aborted", waitedMs: 20 });
  expect(given).toEqual([placement]);
});

it("a loop that ends without an answer (cancelled) is aborted", async () => {
  const clock = { t: 0 };
  const out = await settleLoop(
    events([], clock, 1),
    new AbortController().signal,
    () => clock.t,
    async () => {},
  );
  expect(out).toEqual({ kind: "aborted", waitedMs: 0 });
});
