import { describe, expect, it } from "vitest";
import { iso, provider, RTX_4090_MIB, snapshot, T0 } from "../../test/helpers/core-fixtures.js";
import { classifyRefusal } from "./refusal.js";
import { indexSnapshot } from "./snapshot.js";

const ix = (...ps: ReturnType<typeof provider>[]) => indexSnapshot(snapshot({ providers: ps }));
const only = (model: string) => [{ model, score: 80 }];

describe("§3 refusal classification", () => {
  it("model-too-large when no known-total provider has usable ≥ occ (70b ≈ 57024 MiB by name)", () => {
    const r = classifyRefusal(ix(provider("a", { totalVramMiB: RTX_4090_MIB })), only("llama3:70b"), 100);
    expect(r.reason).toBe("model-too-large");
    expect(r.message).toMatch(/llama3:70b.*57024 MiB.*21616 MiB/);
  });
  it("a card whose usable equals occ is large enough (gpu-busy, not too large)", () => {
    // usable(32768) = 28836 ≥ 28836
    const r = classifyRefusal(ix(provider("a", { totalVramMiB: 32768 })), only("m"), 0);
    expect(r.reason).toBe("gpu-busy"); // unknown occupancy for "m": never too large
    const sized = ix(provider("a", { totalVramMiB: 32768, availableModelFootprintsMiB: { m: 24030 } }));
    // ceil(24030 · 1.2) = 28836
    expect(classifyRefusal(sized, only("m"), 0).reason).toBe("gpu-busy");
    const bigger = ix(provider("a", { totalVramMiB: 32768, availableModelFootprintsMiB: { m: 24031 } }));
    expect(classifyRefusal(bigger, only("m"), 0).reason).toBe("model-too-large");
  });
  it("a warm copy on an unknown-total card proves the model is not too large", () => {
    const r = classifyRefusal(
      ix(
        provider("a", { totalVramMiB: RTX_4090_MIB }),
        provider("b", { loadedModelFootprintsMiB: { "x:70b": 1 } }),
      ),
      only("x:70b"),
      0,
    );
    expect(r.reason).toBe("gpu-busy");
  });
  it("stale providers do not count; not-ready ones do (they may come back), as unavailable, not busy", () => {
    const stale = provider("s", { totalVramMiB: 81920, lastProbedAt: iso(T0 - 3_600_000) });
    const small = provider("a", { totalVramMiB: RTX_4090_MIB });
    expect(classifyRefusal(ix(stale, small), only("llama3:70b"), 0).reason).toBe("model-too-large");
    const down = provider("d", { totalVramMiB: 81920, ready: false });
    expect(classifyRefusal(ix(down, small), only("llama3:70b"), 0).reason).toBe("provider-unavailable");
  });
  it("a breaker-open or unreachable provider is never reported as busy", () => {
    const big = provider("big", { totalVramMiB: 81920 });
    const open = indexSnapshot(
      snapshot({
        providers: [big],
        health: new Map([["big", { circuit: { failuresMs: [], openUntilMs: T0 + 60_000 } }]]),
      }),
    );
    expect(classifyRefusal(open, only("llama3:70b"), 0).reason).toBe("provider-unavailable");
    const probed = provider("big", { totalVramMiB: 81920, lastProbedAt: iso(T0 - 5_000) });
    const suspect = indexSnapshot(
      snapshot({ providers: [probed], suspects: new Map([["big", T0 - 1_000]]) }),
    );
    expect(suspect.byName.get("big")?.ineligible).toBe("unreachable");
    expect(classifyRefusal(suspect, only("llama3:70b"), 0).reason).toBe("provider-unavailable");
    // A probe newer than the suspicion clears it.
    const cleared = indexSnapshot(
      snapshot({ providers: [probed], suspects: new Map([["big", T0 - 10_000]]) }),
    );
    expect(cleared.byName.get("big")?.ineligible).toBeUndefined();
  });
  it("prompt-too-large only when some provider could hold an acceptable model", () => {
    const p = provider("a", { totalVramMiB: RTX_4090_MIB, contextLength: 2048 });
    expect(classifyRefusal(ix(p), only("qwen3:8b"), 2049)).toMatchObject({
      reason: "prompt-too-large",
      largestContext: 2048,
    });
    expect(classifyRefusal(ix(p), only("qwen3:8b"), 2048).reason).toBe("gpu-busy");
    // 70b fits nowhere: nothing could hold it, so the prompt is not the problem.
    expect(classifyRefusal(ix(p), only("llama3:70b"), 99_999).reason).toBe("model-too-large");
  });
  it("prompt-too-large is checked before model-too-large", () => {
    const p = provider("a", { totalVramMiB: RTX_4090_MIB, contextLength: 2048 });
    const list = [
      { model: "llama3:70b", score: 80 },
      { model: "qwen3:8b", score: 75 },
    ];
    expect(classifyRefusal(ix(p), list, 4096).reason).toBe("prompt-too-large");
  });
});
