import { describe, expect, it } from "vitest";
import { gpu, pool } from "../../test/fleet/fixtures.js";
import { PoolCapacity } from "./capacity.js";

const G = "gpu.nvidia.com";
const one = { [G]: 1 };
const two = { [G]: 2 };

/** How many pods claiming `claim` the pool takes before one does not fit. */
function fits(cap: PoolCapacity, claim: Record<string, number>, limit = 100): number {
  let n = 0;
  while (n < limit && cap.charge(claim, 1)) n++;
  return n;
}

describe("PoolCapacity with the agent's report (rule 5)", () => {
  it("four one-GPU pods share one four-GPU node", () => {
    const p = pool("p", {
      nodes: 1,
      observedNodes: 1,
      nodesByFreeDevices: [{ freeDevices: { [G]: 4 }, nodes: 1 }],
      devices: [gpu({ count: 4 })],
    });
    expect(fits(PoolCapacity.of(p), one)).toBe(4);
  });

  it("a pod needing 2 GPUs skips nodes with 1 free", () => {
    const p = pool("p", {
      nodes: 3,
      observedNodes: 3,
      nodesByFreeDevices: [
        { freeDevices: { [G]: 1 }, nodes: 2 },
        { freeDevices: { [G]: 3 }, nodes: 1 },
      ],
      devices: [gpu({ count: 4 })],
    });
    expect(fits(PoolCapacity.of(p), two)).toBe(1);
    expect(fits(PoolCapacity.of(p), one)).toBe(5);
  });

  it("nodes the pool may grow by start empty", () => {
    const p = pool("p", {
      nodes: 3,
      observedNodes: 1,
      nodesByFreeDevices: [{ freeDevices: { [G]: 1 }, nodes: 1 }],
      devices: [gpu({ count: 4 })],
    });
    // the seed's example: one GPU on the observed node, two four-GPU pods on the two to come
    expect(fits(PoolCapacity.of(p), { [G]: 4 })).toBe(2);
    expect(fits(PoolCapacity.of(p), one)).toBe(9);
  });

  it("a pod claiming two kinds needs a node with enough of both", () => {
    const p = pool("p", {
      nodes: 2,
      observedNodes: 2,
      nodesByFreeDevices: [
        { freeDevices: { [G]: 8 }, nodes: 1 },
        { freeDevices: { [G]: 2, "dra.net": 2 }, nodes: 1 },
      ],
    });
    expect(fits(PoolCapacity.of(p), { [G]: 4, "dra.net": 1 })).toBe(0);
    expect(fits(PoolCapacity.of(p), { [G]: 1, "dra.net": 1 })).toBe(2);
  });

  it("a node with nothing free (a fully used node) holds nothing", () => {
    const p = pool("p", { nodes: 1, observedNodes: 1, nodesByFreeDevices: [{ freeDevices: {}, nodes: 1 }] });
    expect(fits(PoolCapacity.of(p), one)).toBe(0);
  });

  it("a clone is independent", () => {
    const p = pool("p", {
      nodes: 1,
      observedNodes: 1,
      nodesByFreeDevices: [{ freeDevices: { [G]: 2 }, nodes: 1 }],
    });
    const cap = PoolCapacity.of(p);
    const copy = cap.clone();
    expect(fits(copy, one)).toBe(2);
    expect(fits(cap, one)).toBe(2);
  });
});

describe("PoolCapacity without a report: whole nodes (upstream)", () => {
  it("a pod claiming any device takes a whole node", () => {
    const p = pool("p", { nodes: 3, devices: [gpu({ count: 8 })] });
    expect(fits(PoolCapacity.of(p), one)).toBe(3);
    expect(fits(PoolCapacity.of(p), { [G]: 8 })).toBe(3);
  });

  it("pods claiming nothing cost nothing", () => {
    const cap = PoolCapacity.of(pool("p", { nodes: 0 }));
    expect(cap.charge({}, 10)).toBe(true);
    expect(cap.charge(one, 1)).toBe(false);
  });

  it("forced charges of existing pods leave no room and never go negative", () => {
    const cap = PoolCapacity.of(pool("p", { nodes: 1 }));
    expect(cap.charge(one, 3, true)).toBe(false);
    expect(cap.totals().nodes).toBe(0);
  });
});
