import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { commonPrefix, pickSlot, type Slot, SlotPool } from "./slot-pool.js";

const seq = (...t: number[]) => ({ contextTokens: t });

function slot(id: number, tokens: number[], lastUsedMs = 0): Slot<{ contextTokens: number[] }> {
  return { id, sequence: seq(...tokens), processing: false, lastUsedMs };
}

describe("pickSlot", () => {
  it("takes the idle slot whose cache shares the longest prefix with the prompt", () => {
    const idle = [slot(0, [1, 2, 9]), slot(1, [1, 2, 3, 4]), slot(2, [])];
    expect(pickSlot(idle, [1, 2, 3, 4, 5], -1)?.id).toBe(1);
    expect(commonPrefix([1, 2, 3, 4], [1, 2, 3, 4, 5])).toBe(4);
  });

  it("takes the least recently used among equals, and the slot asked for when one is", () => {
    const idle = [slot(0, [7], 50), slot(1, [8], 10), slot(2, [9], 30)];
    expect(pickSlot(idle, [1], -1)?.id).toBe(1);
    expect(pickSlot(idle, [1], 2)?.id).toBe(2);
    expect(pickSlot(idle.slice(0, 2), [1], 2)).toBeUndefined();
  });
});

describe("SlotPool", () => {
  it("defers requests beyond its slots, first come first served, and hands freed slots on", async () => {
    const pool = new SlotPool([seq(), seq()], 8);
    const never = new AbortController().signal;
    const a = await pool.acquire([1], -1, never);
    const b = await pool.acquire([2], -1, never);
    expect([pool.processing, pool.deferred]).toEqual([2, 0]);
    const order: string[] = [];
    const note =
      (name: string) =>
      <T>(s: T) => {
        order.push(name);
        return s;
      };
    const c = pool.acquire([3], -1, never).then(note("c"));
    const d = pool.acquire([4], -1, never).then(note("d"));
    expect(pool.deferred).toBe(2);
    pool.release(b, 1);
    expect((await c).id).toBe(b.id);
    pool.release(a, 2);
    expect((await d).id).toBe(a.id);
    expect(order).toEqual(["c", "d"]);
    expect([pool.processing, pool.deferred]).toEqual([2, 0]);
  });

  it("refuses past its queue bound (Busy), and a request whose client leaves leaves the queue", async () => {
    const pool = new SlotPool([seq()], 1);
    const never = new AbortController().signal;
    const held = await pool.acquire([1], -1, never);
    const gone = new AbortController();
    const waiting = pool.acquire([2], -1, gone.signal);
    await expect(pool.acquire([3], -1, never)).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.Busy));
    gone.abort();
    await expect(waiting).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.Canceled));
    expect(pool.deferred).toBe(0);
    pool.release(held, 1);
    expect(pool.processing).toBe(0);
  });

  it("names id_slot when it is out of range", () => {
    const pool = new SlotPool([seq()], 1);
    expect(() => pool.acquire([1], 3, new AbortController().signal)).toThrow(/id_slot: there is no slot 3/);
  });
});
