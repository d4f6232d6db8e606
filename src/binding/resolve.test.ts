import { describe, expect, it } from "vitest";
import { provider } from "../../test/binding/fixtures.js";
import { scopedIndex, scopesFrom } from "./resolve.js";

describe("provider resolution: agent namespace → kubemoot → cluster scope", () => {
  const index = scopedIndex([
    provider("gpu", { namespace: null, endpoint: "http://cluster" }),
    provider("gpu", { namespace: "kubemoot", endpoint: "http://system" }),
    provider("gpu", { namespace: "crew", endpoint: "http://crew" }),
    provider("shared", { namespace: null, endpoint: "http://shared" }),
    provider("sys-only", { namespace: "kubemoot", endpoint: "http://sys-only" }),
    provider("other", { namespace: "elsewhere", endpoint: "http://other" }),
  ]);

  it.each<[string, string, string | undefined]>([
    ["crew", "gpu", "http://crew"],
    ["team-b", "gpu", "http://system"],
    ["kubemoot", "gpu", "http://system"],
    ["crew", "shared", "http://shared"],
    ["crew", "sys-only", "http://sys-only"],
    ["crew", "other", undefined],
    ["elsewhere", "other", "http://other"],
    ["crew", "missing", undefined],
  ])("from %s, %s → %s", (ns, name, endpoint) => {
    expect(index.resolve(ns, name)?.spec.endpoint).toBe(endpoint);
  });

  it("the cluster-scope provider is found when nothing nearer has the name", () => {
    const only = scopedIndex([provider("gpu", { namespace: null, endpoint: "http://cluster" })]);
    expect(only.resolve("crew", "gpu")?.spec.endpoint).toBe("http://cluster");
  });

  it("visible lists one object per name, the nearest, sorted", () => {
    expect(index.visible("crew").map((p) => `${p.namespace ?? "-"}/${p.name}`)).toEqual([
      "crew/gpu",
      "-/shared",
      "kubemoot/sys-only",
    ]);
  });

  it("the kubemoot namespace is searched once", () => {
    expect(scopesFrom("kubemoot")).toEqual(["kubemoot", undefined]);
    expect(scopesFrom("crew")).toEqual(["crew", "kubemoot", undefined]);
  });
});
