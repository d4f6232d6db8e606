import { describe, expect, it } from "vitest";
import { capacityOf, gang, node, RACK } from "../../test/topology/fixtures.js";
import { freeOf } from "./capacity.js";
import { admitJointly, PARK_AFTER_MS } from "./joint.js";

// Two racks of one 4-GPU node each.
const cap = capacityOf([node("h1", "block-a", "rack-1", 4), node("h2", "block-a", "rack-2", 4)]);
const NOW = Date.parse("2026-11-30T12:00:00Z");
const prefill = { ...gang(1, 4, { mode: "required", level: RACK }), key: "ml/set-prefill" };
const decode = { ...gang(1, 4, { mode: "required", level: RACK }), key: "ml/set-decode" };
const huge = { ...gang(3, 4, { mode: "required", level: RACK }), key: "ml/set-huge" };

describe("admitJointly", () => {
  it("admits the set when every role fits, each reservation shrinking what the next sees", () => {
    const r = admitJointly({ key: "ml/set", gangs: [prefill, decode] }, cap, NOW);
    expect(r.state).toBe("Admitted");
    const nodesOf = (k: string) => r.gangs.get(k)!.assignment!.domains.map((d) => d.values[2]);
    expect([nodesOf("ml/set-prefill"), nodesOf("ml/set-decode")]).toEqual([["h1"], ["h2"]]);
    expect(freeOf(r.capacity, "h1")!["nvidia.com/gpu"]).toBe(0);
  });

  it("answers Pending while a role waits; the role that fits holds its reservation", () => {
    const r = admitJointly({ key: "ml/set", gangs: [prefill, huge], since: NOW - 60_000 }, cap, NOW);
    expect(r.state).toBe("Pending");
    expect(r.gangs.get("ml/set-prefill")).toMatchObject({
      admitted: false,
      held: true,
      message: "Pending: fits and holds its reservation while the set waits for ml/set-huge",
    });
    expect(r.gangs.get("ml/set-huge")!.message).toMatch(/^Pending: .*allows to fit only 1 out of 3 pod\(s\)/);
    // The held domain stays idle: nothing else can take h1.
    expect(freeOf(r.capacity, "h1")!["nvidia.com/gpu"]).toBe(0);
  });

  it("reserves nothing when no role fits", () => {
    const r = admitJointly({ key: "ml/set", gangs: [huge] }, cap, NOW);
    expect(r.state).toBe("Pending");
    expect(r.capacity).toBe(cap);
  });

  it("parks a set that has not assembled in 30 minutes and releases what it held", () => {
    const just = admitJointly(
      { key: "ml/set", gangs: [prefill, huge], since: NOW - PARK_AFTER_MS + 1 },
      cap,
      NOW,
    );
    expect(just.state).toBe("Pending");
    const r = admitJointly({ key: "ml/set", gangs: [prefill, huge], since: NOW - PARK_AFTER_MS }, cap, NOW);
    expect(r.state).toBe("Parked");
    expect(r.gangs.get("ml/set-prefill")).toEqual({
      admitted: false,
      held: false,
      message: "Parked: the set ml/set has not assembled in 30 minutes; reservation released",
    });
    expect(r.capacity).toBe(cap);
  });
});
