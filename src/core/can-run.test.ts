import { describe, expect, it } from "vitest";
import { iso, provider, RTX_4090_MIB, snapshot, T0, ticket } from "../../test/helpers/core-fixtures.js";
import { anyCanRun, couldHold } from "./can-run.js";
import { indexSnapshot } from "./snapshot.js";

describe("§3 any can run: warm somewhere, or a known-total card whose usable ≥ occ", () => {
  it("usable equal to occupancy can hold; one MiB more cannot", () => {
    // usable(24563) = 21616; ceil(18013.34 · 1.2) = 21617 is one too many
    const ix = indexSnapshot(
      snapshot({
        providers: [
          provider("a", {
            totalVramMiB: RTX_4090_MIB,
            availableModelFootprintsMiB: { fits: 18013, over: 18014 },
          }),
        ],
      }),
    );
    const v = ix.providers[0]!;
    expect(couldHold(ix, v, "fits")).toBe(true); // ceil(21615.6) = 21616
    expect(couldHold(ix, v, "over")).toBe(false); // ceil(21616.8) = 21617
  });
  it("ignores other residents and busy slots (that is busy, not too small)", () => {
    const ix = indexSnapshot(
      snapshot({
        providers: [
          provider("a", { totalVramMiB: RTX_4090_MIB, loadedModelFootprintsMiB: { other: 20000 } }),
        ],
        tickets: [ticket("a", "other")],
      }),
    );
    expect(anyCanRun(ix, ["qwen3:8b"])).toBe(true);
  });
  it("unknown totals and stale providers prove nothing; a warm copy does", () => {
    const ix = indexSnapshot(
      snapshot({
        providers: [
          provider("u"),
          provider("s", { totalVramMiB: 81920, lastProbedAt: iso(T0 - 400_000) }),
          provider("w", { loadedModelFootprintsMiB: { "big:70b": 1 } }),
        ],
      }),
    );
    expect(anyCanRun(ix, ["qwen3:8b"])).toBe(false);
    expect(anyCanRun(ix, ["big:70b"])).toBe(true);
  });
});
