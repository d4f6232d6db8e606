import { describe, expect, it } from "vitest";
import { iso, provider, T0 } from "../../test/helpers/core-fixtures.js";
import { CLOSED_CIRCUIT, recordFailure } from "./circuit-breaker.js";
import { ineligibility, isStale } from "./eligibility.js";

describe("§3 a provider is skipped when stale (> 5 min), not ready, or its circuit is open", () => {
  it.each([
    ["probed now", iso(T0), false],
    ["exactly 5 minutes old", iso(T0 - 300_000), false],
    ["5 minutes and 1 ms old", iso(T0 - 300_001), true],
    ["an hour old", iso(T0 - 3_600_000), true],
    ["in the future", iso(T0 + 60_000), false],
    ["empty", "", false],
    ["unparsable", "yesterday-ish", false],
  ])("lastProbedAt %s → stale %s", (_label, at, stale) => {
    expect(isStale(at, T0)).toBe(stale);
  });

  it("reasons, stale first", () => {
    expect(ineligibility(provider("a"), undefined, T0)).toBeUndefined();
    expect(ineligibility(provider("a", { ready: false }), undefined, T0)).toBe("not-ready");
    expect(
      ineligibility(provider("a", { ready: false, lastProbedAt: iso(T0 - 600_000) }), undefined, T0),
    ).toBe("stale");
    let c = CLOSED_CIRCUIT;
    for (let i = 0; i < 3; i++) c = recordFailure(c, T0 - 1000 + i);
    expect(ineligibility(provider("a"), c, T0)).toBe("circuit-open");
  });
});
