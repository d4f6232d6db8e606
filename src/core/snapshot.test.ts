import { describe, expect, it } from "vitest";
import { iso, provider, residency, snapshot, T0, ticket } from "../../test/helpers/core-fixtures.js";
import { contextOf } from "./context-fit.js";
import { contextAt, indexSnapshot, oldestClaimedMs } from "./snapshot.js";

describe("snapshot index", () => {
  const ix = indexSnapshot(
    snapshot({
      providers: [
        provider("b", {
          totalVramMiB: 32768,
          loadedModelFootprintsMiB: { x: 10_000, v: 3000 },
          maxParallel: 0,
        }),
        provider("a", { lastProbedAt: iso(T0 - 301_000), loadedModelFootprintsMiB: { x: 9000 } }),
      ],
      tickets: [
        ticket("b", "x", { claimedAtMs: T0 - 7000 }),
        ticket("b", "x", { claimedAtMs: T0 - 2000 }),
        ticket("b", "y", { modelFootprintMiB: 5000, evicts: { v: 3000 } }),
        ticket("b", "z", { modelFootprintMiB: 4000, expiresAt: T0 }), // lease passed
        ticket("ghost", "x"),
      ],
      residencies: [residency("b", "x", 11_000)],
    }),
  );
  const b = ix.byName.get("b")!;

  it("sorts providers by name and flags stale ones", () => {
    expect(ix.providers.map((p) => p.name)).toEqual(["a", "b"]);
    expect(ix.byName.get("a")!.ineligible).toBe("stale");
  });
  it("resident = max(published, overlay); loading, credit and free per provider", () => {
    expect(b.resident.get("x")).toBe(11_000);
    expect(b.residentSum).toBe(14_000);
    expect(b.publishedSum).toBe(13_000);
    expect(Object.fromEntries(b.loading)).toEqual({ y: 5000 });
    expect(b.credit).toBe(3000);
    // usable 28836 − 14000 − 5000
    expect(b.free).toBe(9836);
    expect(b.slots).toBe(1);
  });
  it("counts live tickets per model with the oldest claim", () => {
    expect(b.active).toBe(3);
    expect(b.byModel.get("x")?.count).toBe(2);
    expect(oldestClaimedMs(b.byModel.get("x")!, T0)).toBe(T0 - 7000);
    expect(b.byModel.has("z")).toBe(false);
  });
  it("warm copies exclude stale providers and planned victims; loading copies are warm", () => {
    expect(ix.warmAt.get("x")?.map((p) => p.name)).toEqual(["b"]);
    expect(ix.warmAt.get("v")).toBeUndefined();
    expect(ix.loadingAt.get("y")?.map((p) => p.name)).toEqual(["b"]);
  });
  it("occupancy ignores stale providers", () => {
    expect(ix.occupancy("x")).toEqual({ known: true, mib: 10_000, source: "observed" });
  });
  it("a repeated provider name keeps the later probe", () => {
    const j = indexSnapshot(
      snapshot({
        providers: [
          provider("a", { totalVramMiB: 1, lastProbedAt: iso(T0) }),
          provider("a", { totalVramMiB: 2, lastProbedAt: iso(T0 - 10) }),
        ],
      }),
    );
    expect(j.providers.map((p) => p.state.totalVramMiB)).toEqual([1]);
  });
});

describe("contextAt on the index equals contextOf on the wire shape", () => {
  it.each([
    [{ contextLength: 8192, loadedModelContextLengths: { m: 32768 } }, "m"],
    [{ contextLength: 8192, loadedModelContextLengths: { m: 32768 } }, "n"],
    [{ contextLength: 0, loadedModelContextLengths: { m: 0 } }, "m"],
    [{ contextLength: -5, loadedModelContextLengths: {} }, "m"],
    [{ contextLength: 4096, loadedModelContextLengths: { m: Number.NaN } }, "m"],
  ])("%j / %s", (over, model) => {
    const p = provider("a", over);
    expect(contextAt(indexSnapshot(snapshot({ providers: [p] })).providers[0]!, model)).toBe(
      contextOf(p, model),
    );
  });
});
