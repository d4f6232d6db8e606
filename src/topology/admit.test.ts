import { describe, expect, it } from "vitest";
import { BLOCK, capacityOf, GPU, gang, node, RACK, TREE } from "../../test/topology/fixtures.js";
import { admitGang } from "./admit.js";
import { buildCapacity } from "./capacity.js";
import { HOSTNAME, profileId } from "./levels.js";

// Pods of one GPU each. rack-1: 2 + 1 = 3, rack-2: 2, rack-3: 4 (2 + 2); block-a = 5, block-b = 4.
const nodes = [
  node("h1", "block-a", "rack-1", 2),
  node("h2", "block-a", "rack-1", 1),
  node("h3", "block-a", "rack-2", 2),
  node("h4", "block-b", "rack-3", 2),
  node("h5", "block-b", "rack-3", 2),
];
const TOPO = `kubemoot-${profileId(TREE)}`;
const cap = capacityOf(nodes);

function hosts(r: ReturnType<typeof admitGang>): Record<string, number> {
  if (!r.admitted) throw new Error(r.message);
  return Object.fromEntries(r.assignment.domains.map((d) => [d.values[2]!, d.count]));
}

describe("required level", () => {
  it("takes the smallest rack that fits (rack-2 for 2 pods, rack-1 for 3)", () => {
    const two = admitGang(gang(2, 1, { mode: "required", level: RACK }), cap);
    expect(two).toMatchObject({
      admitted: true,
      assignment: { levels: TREE, domains: [{ values: ["block-a", "rack-2", "h3"], count: 2 }] },
      message: `admitted in topology "${TOPO}": 2 pod(s) within ${RACK}=rack-2`,
    });
    expect(hosts(admitGang(gang(3, 1, { mode: "required", level: RACK }), cap))).toEqual({ h1: 2, h2: 1 });
  });

  it("takes the smallest block that fits, slicing the gang over its hosts", () => {
    expect(hosts(admitGang(gang(4, 1, { mode: "required", level: BLOCK }), cap))).toEqual({ h4: 2, h5: 2 });
    expect(hosts(admitGang(gang(5, 1, { mode: "required", level: BLOCK }), cap))).toEqual({
      h1: 2,
      h2: 1,
      h3: 2,
    });
  });

  it("fails with how many of the gang the best domain could take", () => {
    expect(admitGang(gang(5, 1, { mode: "required", level: RACK }), cap)).toEqual({
      admitted: false,
      message: `topology "${TOPO}" at level ${RACK} allows to fit only 4 out of 5 pod(s)`,
    });
    expect(admitGang(gang(2, 3, { mode: "required", level: RACK }), cap)).toEqual({
      admitted: false,
      message: `topology "${TOPO}" at level ${RACK} doesn't allow to fit any of 2 pod(s)`,
    });
  });

  it("refuses the hostname level and reports a level no profile has", () => {
    expect(admitGang(gang(1, 1, { mode: "required", level: HOSTNAME }), cap)).toEqual({
      admitted: false,
      message: `${HOSTNAME} is implicit and cannot be requested as a level`,
    });
    expect(admitGang(gang(1, 1, { mode: "required", level: "topology.kubemoot.ai/row" }), cap)).toEqual({
      admitted: false,
      message: "no hierarchy profile has level topology.kubemoot.ai/row (1 pod(s))",
    });
  });
});

describe("preferred level", () => {
  it("escalates to the block when no rack fits", () => {
    const r = admitGang(gang(5, 1, { mode: "preferred", level: RACK }), cap);
    expect(hosts(r)).toEqual({ h1: 2, h2: 1, h3: 2 });
    expect(r.message).toBe(
      `admitted in topology "${TOPO}": 5 pod(s) within ${BLOCK}=block-a (no ${RACK} domain had room)`,
    );
  });

  it("takes blocks greedily at the top, largest first and the last one tight", () => {
    // 8 pods: block-a (5) whole, then 3 from block-b (4): rack-3 → h4 2 + h5 1.
    const r = admitGang(gang(8, 1, { mode: "preferred", level: RACK }), cap);
    expect(hosts(r)).toEqual({ h1: 2, h2: 1, h3: 2, h4: 2, h5: 1 });
    expect(admitGang(gang(10, 1, { mode: "preferred", level: RACK }), cap)).toEqual({
      admitted: false,
      message: `topology "${TOPO}" at level ${BLOCK} allows to fit only 9 out of 10 pod(s)`,
    });
  });
});

describe("unconstrained", () => {
  it("fills the fullest nodes first (LeastFreeCapacity)", () => {
    // counts: h2 1, then h1 h3 h4 h5 2 each (path order breaks ties).
    expect(hosts(admitGang(gang(1, 1, { mode: "unconstrained" }), cap))).toEqual({ h2: 1 });
    expect(hosts(admitGang(gang(4, 1, { mode: "unconstrained" }), cap))).toEqual({ h1: 2, h2: 1, h3: 1 });
  });

  it("never adds capacity of two profiles together", () => {
    const a = [node("a1", "block-a", "rack-1", 2)];
    const b = [node("b1", "block-b", "rack-2", 2)];
    const refA = { profile: profileId(TREE), levels: TREE };
    const refB = { profile: profileId([HOSTNAME]), levels: [HOSTNAME] };
    const mixed = buildCapacity(
      [...a, ...b],
      new Map([
        ["a1", refA],
        ["b1", refB],
      ]),
    );
    const r = admitGang(gang(3, 1, { mode: "unconstrained" }), mixed);
    expect(r).toEqual({
      admitted: false,
      message: [refA.profile, refB.profile]
        .sort()
        .map((p) => `topology "kubemoot-${p}" allows to fit only 2 out of 3 pod(s)`)
        .join("; "),
    });
    expect(admitGang(gang(2, 1, { mode: "unconstrained" }), mixed).admitted).toBe(true);
  });
});

describe("leaves and exclusions", () => {
  it("merges the nodes of a leaf when the lowest level is not the hostname", () => {
    // Two nodes with 3 GPUs each: per node one 2-GPU pod, summed as one rack three.
    const merged = capacityOf(
      [node("m1", "block-a", "rack-1", 3), node("m2", "block-a", "rack-1", 3)],
      [BLOCK, RACK],
    );
    const r = admitGang(gang(3, 2, { mode: "required", level: RACK }), merged);
    expect(r).toMatchObject({
      admitted: true,
      assignment: { levels: [BLOCK, RACK], domains: [{ values: ["block-a", "rack-1"], count: 3 }] },
    });
    const perNode = capacityOf([node("m1", "block-a", "rack-1", 3), node("m2", "block-a", "rack-1", 3)]);
    expect(admitGang(gang(3, 2, { mode: "required", level: RACK }), perNode).admitted).toBe(false);
  });

  it("excludes not Ready, unschedulable, tainted and unlabeled nodes, counted by reason", () => {
    const taint = { key: "dedicated", value: "batch", effect: "NoSchedule" };
    const c = capacityOf([
      node("ok", "block-a", "rack-1", 1),
      node("down", "block-a", "rack-1", 8, { ready: false }),
      node("cordoned", "block-a", "rack-1", 8, { unschedulable: true }),
      node("tainted", "block-a", "rack-1", 8, { taints: [taint] }),
      node("norack", "block-a", undefined, 8),
      node("nohost", "block-a", "rack-1", 8, { hostname: false }),
    ]);
    expect(c.exclusions).toEqual([
      { node: "cordoned", profile: profileId(TREE), reason: "Unschedulable" },
      { node: "down", profile: profileId(TREE), reason: "NotReady" },
      { node: "nohost", profile: profileId(TREE), reason: "MissingLabel" },
      { node: "norack", profile: profileId(TREE), reason: "MissingLabel" },
    ]);
    expect(admitGang(gang(2, 1, { mode: "required", level: RACK }), c)).toEqual({
      admitted: false,
      message:
        `topology "${TOPO}" at level ${RACK} allows to fit only 1 out of 2 pod(s) ` +
        "(excluded nodes: 1 not Ready, 1 unschedulable, 1 untolerated taint, 2 missing level labels)",
    });
    const tolerant = gang(
      2,
      1,
      { mode: "required", level: RACK },
      {
        tolerations: [{ key: "dedicated", operator: "Equal", value: "batch", effect: "NoSchedule" }],
      },
    );
    expect(hosts(admitGang(tolerant, c))).toEqual({ tainted: 2 });
    const wrongValue = {
      ...tolerant,
      tolerations: [{ key: "dedicated", operator: "Equal" as const, value: "x" }],
    };
    expect(admitGang(wrongValue, c).admitted).toBe(false);
    const existsAll = { ...tolerant, tolerations: [{ operator: "Exists" as const }] };
    expect(admitGang(existsAll, c).admitted).toBe(true);
  });

  it("counts every requested resource, pods included", () => {
    const n = node("tight", "block-a", "rack-1", 8);
    const c = capacityOf([{ ...n, free: { [GPU]: 8000, pods: 2000 } }]);
    expect(admitGang(gang(3, 1, { mode: "required", level: RACK }), c).message).toContain(
      "allows to fit only 2 out of 3 pod(s)",
    );
  });
});

describe("weights locality", () => {
  it("puts pods on nodes holding the weights first, without changing the chosen domain", () => {
    const plain = admitGang(gang(2, 1, { mode: "required", level: RACK }), cap);
    const hot = admitGang(gang(2, 1, { mode: "required", level: RACK }, { preferredNodes: ["h4"] }), cap);
    expect(hosts(plain)).toEqual({ h3: 2 });
    // h4 is in rack-3, not the chosen rack-2: the preference cannot move the gang there.
    expect(hosts(hot)).toEqual({ h3: 2 });
    // 2 pods in a block: block-b (the smallest that fits), rack-3; h4 first by path, h5 when hot.
    const block = gang(2, 1, { mode: "required", level: BLOCK });
    expect(hosts(admitGang(block, cap))).toEqual({ h4: 2 });
    expect(hosts(admitGang({ ...block, preferredNodes: ["h5"] }, cap))).toEqual({ h5: 2 });
    // A hot node takes what fits; the rest go where capacity allows.
    expect(
      hosts(admitGang({ ...gang(3, 1, { mode: "required", level: BLOCK }), preferredNodes: ["h5"] }, cap)),
    ).toEqual({
      h4: 1,
      h5: 2,
    });
    const unc = admitGang(gang(2, 1, { mode: "unconstrained" }, { preferredNodes: ["h5"] }), cap);
    expect(hosts(unc)).toEqual({ h5: 2 });
  });
});
