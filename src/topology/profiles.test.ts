import { describe, expect, it } from "vitest";
import { fnv1a64, HOSTNAME, normalizeLevels, profileId, REGION, ZONE } from "./levels.js";
import { deriveProfiles, detectDrift } from "./profiles.js";
import type { SourceStatus } from "./sources.js";
import type { Labels } from "./types.js";

const RACK = "topology.kubemoot.ai/rack";

function status(
  name: string,
  levels: string[],
  values: Record<string, Record<string, string>>,
  ready = true,
): SourceStatus {
  return {
    name,
    ready,
    reason: ready ? "Accepted" : "InvalidHierarchy",
    message: "",
    levels,
    selectedNodes: Object.keys(values).sort(),
    values: new Map(Object.entries(values)),
  };
}

describe("profile ids", () => {
  it("are fnv64- and FNV-1a 64 of the level keys joined by NUL (the spec's two examples)", () => {
    expect(profileId([REGION, ZONE, HOSTNAME])).toBe("fnv64-570aeab478df5111");
    expect(profileId([HOSTNAME])).toBe("fnv64-87bf574bea2a4f23");
  });

  it("FNV-1a 64 matches the published test vectors", () => {
    expect(fnv1a64("")).toBe("cbf29ce484222325");
    expect(fnv1a64("a")).toBe("af63dc4c8601ec8c");
    expect(fnv1a64("foobar")).toBe("85944171f73967e8");
  });

  it("depend on the order of the levels", () => {
    expect(profileId([ZONE, REGION, HOSTNAME])).not.toBe(profileId([REGION, ZONE, HOSTNAME]));
  });
});

describe("Topograph tiers", () => {
  it("reverses a contiguous run of tiers to coarsest-first and leaves other keys in place", () => {
    expect(
      normalizeLevels([
        ZONE,
        "fabric.topograph.run/tier-1",
        "fabric.topograph.run/tier-2",
        "fabric.topograph.run/tier-3",
        RACK,
      ]),
    ).toEqual([
      ZONE,
      "fabric.topograph.run/tier-3",
      "fabric.topograph.run/tier-2",
      "fabric.topograph.run/tier-1",
      RACK,
    ]);
    expect(normalizeLevels([REGION, ZONE])).toEqual([REGION, ZONE]);
  });

  it("hashes the normalized order", () => {
    const nodes = new Map<string, Labels>([["n1", {}]]);
    const tiers = ["fabric.topograph.run/tier-1", "fabric.topograph.run/tier-2"];
    const values = {
      n1: { "fabric.topograph.run/tier-1": "leaf1", "fabric.topograph.run/tier-2": "spine1" },
    };
    const p = deriveProfiles(nodes, [status("topograph", normalizeLevels(tiers), values)]);
    expect(p.nodes.get("n1")!.levels).toEqual([
      "fabric.topograph.run/tier-2",
      "fabric.topograph.run/tier-1",
      HOSTNAME,
    ]);
  });
});

describe("deriveProfiles", () => {
  const nodes = new Map<string, Labels>([
    ["full", {}],
    ["partial", {}],
    ["lone", {}],
    ["both", {}],
  ]);

  it("takes the longest populated prefix and appends the hostname", () => {
    const p = deriveProfiles(nodes, [
      status("cloud", [REGION, ZONE, RACK], {
        full: { [REGION]: "eu", [ZONE]: "eu-1", [RACK]: "r1" },
        partial: { [REGION]: "eu" },
      }),
    ]);
    expect(p.nodes.get("full")!.levels).toEqual([REGION, ZONE, RACK, HOSTNAME]);
    expect(p.nodes.get("partial")!.levels).toEqual([REGION, HOSTNAME]);
    expect(p.nodes.get("partial")!.profile).toBe(profileId([REGION, HOSTNAME]));
    expect(p.nodes.get("full")!.labels[RACK]).toBe("r1");
    expect([...p.profiles.keys()]).toEqual([...p.profiles.keys()].sort());
  });

  it("gives hostname only to a node no source selects, or two Ready sources select", () => {
    const p = deriveProfiles(nodes, [
      status("a", [ZONE], { both: { [ZONE]: "z1" }, full: { [ZONE]: "z1" } }),
      status("b", [RACK], { both: { [RACK]: "r1" } }),
    ]);
    expect(p.nodes.get("lone")).toMatchObject({ levels: [HOSTNAME], profile: "fnv64-87bf574bea2a4f23" });
    expect(p.nodes.get("both")).toMatchObject({ levels: [HOSTNAME], profile: "fnv64-87bf574bea2a4f23" });
    expect(p.nodes.get("both")!.labels[ZONE]).toBeUndefined();
    expect(p.nodes.get("full")!.levels).toEqual([ZONE, HOSTNAME]);
  });

  it("ignores sources that are not Ready", () => {
    const p = deriveProfiles(nodes, [
      status("broken", [RACK], { both: { [RACK]: "r9" } }, false),
      status("ok", [ZONE], { both: { [ZONE]: "z1" } }),
    ]);
    expect(p.nodes.get("both")!.levels).toEqual([ZONE, HOSTNAME]);
  });
});

describe("detectDrift", () => {
  it("refuses a profile whose existing hierarchy has other levels, and accepts an identical one", () => {
    const derived = new Map([[profileId([ZONE, HOSTNAME]), [ZONE, HOSTNAME]]]);
    expect(detectDrift(new Map([[profileId([ZONE, HOSTNAME]), [ZONE, HOSTNAME]]]), derived)).toEqual([]);
    expect(detectDrift(new Map(), derived)).toEqual([]);
    expect(detectDrift(new Map([[profileId([ZONE, HOSTNAME]), [REGION, HOSTNAME]]]), derived)).toEqual([
      `profile ${profileId([ZONE, HOSTNAME])}: the existing hierarchy has levels [${REGION}, ${HOSTNAME}], the derived one [${ZONE}, ${HOSTNAME}]; refusing to rewrite it`,
    ]);
  });
});
