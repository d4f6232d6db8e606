import { describe, expect, it } from "vitest";
import { tolerates, untolerated } from "./taints.js";
import type { Taint, Toleration } from "./types.js";

const taint: Taint = { key: "dedicated", value: "gpu", effect: "NoSchedule" };

describe("tolerates (Kubernetes' ToleratesTaint)", () => {
  it.each<[string, Toleration, Taint, boolean]>([
    [
      "Equal, same key/value/effect",
      { key: "dedicated", operator: "Equal", value: "gpu", effect: "NoSchedule" },
      taint,
      true,
    ],
    [
      "Equal, other value",
      { key: "dedicated", operator: "Equal", value: "cpu", effect: "NoSchedule" },
      taint,
      false,
    ],
    [
      "Equal, other key",
      { key: "team", operator: "Equal", value: "gpu", effect: "NoSchedule" },
      taint,
      false,
    ],
    ["Equal, no value vs a valued taint", { key: "dedicated", operator: "Equal" }, taint, false],
    [
      "Equal, no value vs a valueless taint",
      { key: "dedicated", operator: "Equal" },
      { key: "dedicated", effect: "NoSchedule" },
      true,
    ],
    ["Exists, same key", { key: "dedicated", operator: "Exists" }, taint, true],
    ["Exists, other key", { key: "team", operator: "Exists" }, taint, false],
    [
      "keyless Exists tolerates everything",
      { operator: "Exists" },
      { key: "any", value: "x", effect: "NoExecute" },
      true,
    ],
    [
      "keyless Exists with an effect only that effect",
      { operator: "Exists", effect: "NoExecute" },
      taint,
      false,
    ],
    ["effect-less tolerates NoSchedule", { key: "dedicated", operator: "Exists" }, taint, true],
    [
      "effect-less tolerates NoExecute",
      { key: "dedicated", operator: "Exists" },
      { ...taint, effect: "NoExecute" },
      true,
    ],
    ["other effect", { key: "dedicated", operator: "Exists", effect: "NoExecute" }, taint, false],
  ])("%s", (_, t, x, want) => {
    expect(tolerates(t, x)).toBe(want);
  });

  it("untolerated filters by effect", () => {
    const taints: Taint[] = [
      taint,
      { key: "drain", effect: "NoExecute" },
      { key: "soft", effect: "PreferNoSchedule" },
    ];
    expect(untolerated(taints, [], ["NoExecute"])).toEqual([taints[1]]);
    expect(untolerated(taints, [{ key: "drain", operator: "Exists" }], ["NoSchedule", "NoExecute"])).toEqual([
      taint,
    ]);
    expect(untolerated(taints, [{ operator: "Exists" }], ["NoSchedule", "NoExecute"])).toEqual([]);
  });
});
