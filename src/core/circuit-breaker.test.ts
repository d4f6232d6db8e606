import { describe, expect, it } from "vitest";
import {
  type CircuitState,
  CLOSED_CIRCUIT,
  circuitOpen,
  recordFailure,
  recordSuccess,
} from "./circuit-breaker.js";

function fail(at: readonly number[], start: CircuitState = CLOSED_CIRCUIT): CircuitState {
  return at.reduce((c, t) => recordFailure(c, t), start);
}

describe("§3 circuit: 3 failures within 120 s open it for 60 s; a success closes it", () => {
  it("3 failures inside the window open it for 60 s", () => {
    const c = fail([0, 50_000, 119_999]);
    expect(circuitOpen(c, 119_999)).toBe(true);
    expect(circuitOpen(c, 119_999 + 59_999)).toBe(true);
    expect(circuitOpen(c, 119_999 + 60_000)).toBe(false);
  });
  it("2 failures do not open it", () => {
    expect(circuitOpen(fail([0, 1000]), 1000)).toBe(false);
  });
  it("failures spread over more than 120 s do not open it", () => {
    // The first failure is exactly 120 s old at the third one: outside the window.
    expect(circuitOpen(fail([0, 60_000, 120_000]), 120_000)).toBe(false);
  });
  it("a success closes an open circuit at once", () => {
    const c = recordSuccess(fail([0, 1, 2]));
    expect(circuitOpen(c, 3)).toBe(false);
    // ...and resets the count: two more failures do not reopen it.
    expect(circuitOpen(fail([4, 5], c), 5)).toBe(false);
  });
  it("is immutable", () => {
    const c = fail([0, 1]);
    recordFailure(c, 2);
    expect(c.failuresMs).toEqual([0, 1]);
    expect(circuitOpen(undefined, 0)).toBe(false);
  });
});
