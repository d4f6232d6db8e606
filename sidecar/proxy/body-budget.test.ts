import { describe, expect, it } from "vitest";
import { ByteBudget } from "./body-budget.js";

const never = new AbortController().signal;
const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return done;
};

describe("ByteBudget: the request bytes the proxy holds at once", () => {
  it("grants what fits at once and makes the rest wait, first come first served", async () => {
    const b = new ByteBudget(16);
    const r1 = await b.acquire(7, never);
    const r2 = await b.acquire(7, never);
    const third = b.acquire(7, never);
    const fourth = b.acquire(1, never);
    expect(await settled(third)).toBe(false);
    // A small body does not overtake one that waits before it.
    expect(await settled(fourth)).toBe(false);
    r1();
    expect(await settled(third)).toBe(true);
    expect(await settled(fourth)).toBe(true);
    expect(b.usedBytes).toBe(15);
    r1(); // idempotent
    expect(b.usedBytes).toBe(15);
    r2();
    (await third)();
    (await fourth)();
    expect(b.usedBytes).toBe(0);
  });

  it("caps a request at the capacity, so the largest body still gets through alone", async () => {
    const b = new ByteBudget(8);
    const r = await b.acquire(100, never);
    expect(b.usedBytes).toBe(8);
    r();
    expect(b.usedBytes).toBe(0);
  });

  it("a waiter whose client went away leaves the queue and lets the next one in", async () => {
    const b = new ByteBudget(10);
    const r1 = await b.acquire(6, never);
    const gone = new AbortController();
    const second = b.acquire(6, gone.signal);
    const third = b.acquire(4, never);
    expect(await settled(third)).toBe(false);
    gone.abort(new Error("client gone"));
    await expect(second).rejects.toThrow("client gone");
    expect(await settled(third)).toBe(true);
    r1();
    (await third)();
    expect(b.usedBytes).toBe(0);
  });
});
