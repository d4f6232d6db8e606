// Interleavings of the claim protocol, explored by fast-check's scheduler: three "sidecars"
// share one in-memory store; every KV request and every response is a scheduling point, so
// reads, help writes, guard CASes and ticket writes of racing claims interleave arbitrarily.
// An independent checker follows every revision of the tickets bucket: no overcommit, ever;
// and no claim gives up for contention.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OvercommitChecker } from "../../test/helpers/contention/index.js";
import { scheduledStore } from "../../test/helpers/scheduled-kv.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import type { ProviderState } from "../core/index.js";
import { PROVIDER_TICKETS_BUCKET } from "./buckets.js";
import type { ClaimResult } from "./claim-types.js";
import { MemoryKvStore } from "./memory-kv.js";
import { openStateStore, type StateStore } from "./store.js";

const STATES: ProviderState[] = [
  // usable 14336: room for one big model, or two medium ones
  providerState("p1", { totalVramMiB: 16384, lastProbedAt: "" }),
  // usable 14336 with a 6000 MiB idle resident: evictions give credit
  providerState("p2", { totalVramMiB: 16384, loadedModelFootprintsMiB: { idle: 6000 }, lastProbedAt: "" }),
];

const op = fc.record({
  sidecar: fc.integer({ min: 0, max: 2 }),
  provider: fc.constantFrom("p1", "p2"),
  model: fc.constantFrom("big", "medium", "medium2", "small", "idle"),
  evict: fc.boolean(),
  release: fc.boolean(),
});

const FOOTPRINT: Record<string, number> = {
  big: 12000,
  medium: 7000,
  medium2: 7000,
  small: 2000,
  idle: 6000,
};

/** Three "sidecars" on one store, every KV request and response a scheduling point. */
async function racingStores(
  kv: MemoryKvStore,
  s: fc.Scheduler,
  gate: { on: boolean },
): Promise<StateStore[]> {
  const stores: StateStore[] = [];
  for (let i = 0; i < 3; i++) {
    stores.push(
      await openStateStore(scheduledStore(kv, s, gate), {
        holderId: `sidecar-${i}`,
        claimMaxAttempts: 200,
        claimBatch: 3,
        // Most decisions prove their copy current (more interleavings). Not 1 ms: a claim gives
        // up after 20 proofs that aged past three quarters of the bound before its synchronous
        // decision, which a loaded CI machine once managed (StateUnavailable).
        freshnessMs: 10,
        // Tombstones go as early as the rule allows (docs/rules/state.md §10).
        ticketTombstoneKeepMs: 0,
        mirrorPruneEvery: 1,
      }),
    );
  }
  return stores;
}

describe("claim protocol under arbitrary interleavings", () => {
  it("never overcommits and never gives up while someone wins", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(op, { minLength: 2, maxLength: 14 }), async (s, ops) => {
        const kv = new MemoryKvStore();
        const gate = { on: false };
        const stores = await racingStores(kv, s, gate);
        for (const st of STATES) await stores[0]!.providerWriter.publish(st);
        // The bucket exists already (the stores created it); its settings are not consulted.
        const raw = await kv.bucket(PROVIDER_TICKETS_BUCKET, {
          history: 1,
          ttlMs: 0,
          maxValueBytes: 0,
          replicas: 1,
        });
        const checker = new OvercommitChecker(new Map(STATES.map((st) => [st.name, st])));
        const watch = await raw.watch({ include: "initial" });
        const following = (async () => {
          for await (const e of watch) checker.apply(e.key, e.operation, e.value, e.revision);
        })();
        gate.on = true;
        const results: ClaimResult[] = [];
        const tasks = ops.map(async (o) => {
          const evicts = o.evict && o.provider === "p2" && o.model !== "idle" ? { idle: 6000 } : undefined;
          const r = await stores[o.sidecar]!.tickets.claim({
            provider: o.provider,
            model: o.model,
            modelFootprintMiB: FOOTPRINT[o.model]!,
            ...(evicts !== undefined ? { evicts } : {}),
          });
          results.push(r);
          // A plan with evictions keeps its ticket: releasing it while another ticket relies on
          // its victim's credit is a real-world ordering (the victim is gone by then).
          if (r.ok && o.release && evicts === undefined) await stores[o.sidecar]!.tickets.release(r.ticket);
        });
        await s.waitFor(Promise.all(tasks));
        gate.on = false;
        await new Promise((r) => setTimeout(r, 0));
        watch.stop();
        await following;
        await Promise.all(stores.map((st) => st.close()));
        expect(checker.violations).toEqual([]);
        expect(results.filter((r) => !r.ok && r.reason === "contention")).toEqual([]);
        expect(results.length).toBe(ops.length);
      }),
      { numRuns: 150 },
    );
  });
});

// Slots fleet-wide (docs/rules/state.md §6, "Slots"): a one-slot copy is never granted to two
// calls at once, whichever sidecars they come from and whether they go warm (no guard) or
// through the guard (a model loading).
const SLOT_STATES: ProviderState[] = [
  // chat is resident (warm claims); cold is not (its claims go through the guard).
  // A claim for chat that plans to unload idle goes through the guard as well.
  providerState("s1", {
    totalVramMiB: 24576,
    loadedModelFootprintsMiB: { chat: 4000, idle: 2000 },
    lastProbedAt: "",
  }),
];

const slotOp = fc.record({
  sidecar: fc.integer({ min: 0, max: 2 }),
  model: fc.constantFrom("chat", "cold"),
  evict: fc.boolean(),
  release: fc.boolean(),
});

describe("slots under arbitrary interleavings", () => {
  it("never grants a one-slot copy to two calls at once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(slotOp, { minLength: 2, maxLength: 10 }), async (s, ops) => {
        const kv = new MemoryKvStore();
        const gate = { on: false };
        const stores = await racingStores(kv, s, gate);
        for (const st of SLOT_STATES) await stores[0]!.providerWriter.publish(st);
        gate.on = true;
        const inUse = new Map<string, number>();
        let most = 0;
        const tasks = ops.map(async (o) => {
          const r = await stores[o.sidecar]!.tickets.claim({
            provider: "s1",
            model: o.model,
            modelFootprintMiB: 4000,
            slots: 1,
            ...(o.evict ? { evicts: { idle: 2000 } } : {}),
          });
          if (!r.ok) return;
          const n = (inUse.get(o.model) ?? 0) + 1;
          inUse.set(o.model, n);
          most = Math.max(most, n);
          if (o.release) {
            inUse.set(o.model, (inUse.get(o.model) ?? 1) - 1);
            await stores[o.sidecar]!.tickets.release(r.ticket);
          }
        });
        await s.waitFor(Promise.all(tasks));
        gate.on = false;
        await Promise.all(stores.map((st) => st.close()));
        expect(most).toBeLessThanOrEqual(1);
      }),
      { numRuns: 150 },
    );
  });
});
