// explainPlan (docs/rules/placement.md §5): the options a decision record shows are the ones the
// time policy weighs, best first in its own order, so the first one is the decision it makes.
import { describe, expect, it } from "vitest";
import {
  provider,
  RTX_4090_MIB,
  RTX_5090_MIB,
  snapshot,
  T0,
  ticket,
} from "../../test/helpers/core-fixtures.js";
import { explainPlan, type PlanRequest, plan } from "./planner.js";
import { indexSnapshot } from "./snapshot.js";

const Q8 = "qwen3:8b";
const Q14 = "qwen3:14b";
const F8 = 5979;
const F14 = 12224;
const DISK = { [Q8]: F8 / 1.2, [Q14]: F14 / 1.2 };

const req: PlanRequest = {
  candidates: [
    { model: Q14, score: 90 },
    { model: Q8, score: 80 },
  ],
  promptTokens: 1000,
};

describe("explainPlan", () => {
  it("lists the weighed options best first, the first being the decision", () => {
    const s = snapshot({
      providers: [
        provider("rtx-5090", {
          totalVramMiB: RTX_5090_MIB,
          availableModelFootprintsMiB: DISK,
          loadedModelFootprintsMiB: { [Q14]: F14 },
        }),
        provider("rtx-4090", { totalVramMiB: RTX_4090_MIB, availableModelFootprintsMiB: DISK }),
      ],
    });
    const ix = indexSnapshot(s, { policy: "time" });
    const options = explainPlan(ix, req);
    const d = plan(ix, req);
    expect(d).toMatchObject({ kind: "claim", provider: "rtx-5090", model: Q14 });
    expect(options[0]).toMatchObject({ provider: "rtx-5090", model: Q14, kind: "warm" });
    expect(options.some((o) => o.provider === "rtx-4090" && o.kind === "cold")).toBe(true);
    for (let i = 1; i < options.length; i++) {
      expect(options[i]!.seconds).toBeGreaterThanOrEqual(options[i - 1]!.seconds - 0.5);
    }
    expect(explainPlan(ix, req, 1)).toEqual(options.slice(0, 1));
  });

  it("shows the queue it chose over a cold load, and nothing for a policy that does not explain", () => {
    const s = snapshot({
      providers: [
        provider("rtx-4090", {
          totalVramMiB: RTX_4090_MIB,
          availableModelFootprintsMiB: DISK,
          loadedModelFootprintsMiB: { [Q14]: F14 },
        }),
      ],
      tickets: [ticket("rtx-4090", Q14, { claimedAtMs: T0 - 1000 })],
    });
    const time = indexSnapshot(s, { policy: "time" });
    const d = plan(time, { ...req, candidates: [{ model: Q14, score: 90 }] });
    const options = explainPlan(time, { ...req, candidates: [{ model: Q14, score: 90 }] });
    expect(d.kind).toBe("queue");
    expect(options[0]).toMatchObject({ provider: "rtx-4090", model: Q14, kind: "queue" });
    expect(explainPlan(indexSnapshot(s, { policy: "kubemoot" }), req)).toEqual([]);
  });
});
