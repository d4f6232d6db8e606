// A claim is decided against the freshest provider state it can know (issue 16, item 6). Two
// state stores share one in-memory backend; the first one's copy of provider state lags by a
// moment (its watch delivers late, within the freshness bound), so it may still believe a model
// resident that the provider no longer holds, while the second, with the newer state, has
// already spent the room on another load. The guard records the provider-state revision each
// decision read; a later claim with an older state catches up before it decides.
import { afterEach, expect, it } from "vitest";
import { wrapBuckets } from "../../test/helpers/kv-wrap.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { PROVIDER_STATE_BUCKET } from "./buckets.js";
import type { KvEntry, KvStore } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { openStateStore, type StateStore } from "./store.js";

const stores: StateStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** `inner`, with the provider-state watch delivering each event `ms` late. */
function laggingProviderState(inner: KvStore, ms: number): KvStore {
  return wrapBuckets(inner, (b) =>
    b.name !== PROVIDER_STATE_BUCKET
      ? {}
      : {
          watch: async (o) => {
            const w = await b.watch(o);
            async function* late(): AsyncGenerator<KvEntry> {
              for await (const e of w) {
                await new Promise((r) => setTimeout(r, ms));
                yield e;
              }
            }
            const it = late();
            return { stop: () => w.stop(), [Symbol.asyncIterator]: () => it };
          },
        },
  );
}

/**
 * Two stores on one backend, the second one's provider-state copy lagging 60 ms; both know
 * alpha (9000 MiB) resident on a 16384 MiB card (usable 14336: alpha or beta, never both), and
 * the lagging one was just proven current, so the next 150 ms need no new proof.
 */
async function twoStores(): Promise<{ fresh: StateStore; stale: StateStore }> {
  const inner = new MemoryKvStore();
  const fresh = await openStateStore(inner, { holderId: "fresh" });
  const stale = await openStateStore(laggingProviderState(inner, 60), { holderId: "stale" });
  stores.push(fresh, stale);
  await fresh.providerWriter.publish(
    providerState("gpu", { totalVramMiB: 16384, loadedModelFootprintsMiB: { "alpha:7b": 9000 } }),
  );
  await stale.providers.fresh();
  await new Promise((r) => setTimeout(r, 100));
  await stale.providers.fresh();
  expect(stale.providers.peek("gpu")?.loadedModels).toEqual(["alpha:7b"]);
  return { fresh, stale };
}

it("a warm claim on a model a newer state no longer lists is not granted beside the load that took its room", async () => {
  const { fresh, stale } = await twoStores();

  // The provider unloads alpha; the fresh store sees it and loads beta into the room.
  await fresh.providerWriter.publish(providerState("gpu", { totalVramMiB: 16384 }));
  await fresh.providers.fresh();
  const beta = await fresh.tickets.claim({ provider: "gpu", model: "beta:7b", modelFootprintMiB: 9000 });
  expect(beta.ok && beta.coldLoad).toBe(true);

  // The stale store still lists alpha as resident, within its freshness bound.
  expect(stale.providers.peek("gpu")?.loadedModels).toEqual(["alpha:7b"]);
  const alpha = await stale.tickets.claim({ provider: "gpu", model: "alpha:7b", modelFootprintMiB: 9000 });
  // Granting it "warm" would put alpha (reloaded by its call) beside beta: 18000 MiB on 16384.
  expect(alpha.ok).toBe(false);
  if (!alpha.ok) expect(alpha.reason).toBe("no-room");
  expect(stale.providers.peek("gpu")?.loadedModels).toEqual([]);
});

it("a load is not granted beside a warm ticket whose model the newer state no longer lists", async () => {
  const { fresh, stale } = await twoStores();
  await fresh.providerWriter.publish(providerState("gpu", { totalVramMiB: 16384 }));
  // The stale store claims alpha warm first: no decision on a newer state exists yet.
  // (Its state changed a moment ago, so the claim is decided on the guard, on the newest state:
  // alpha is loaded again, cold. Either way it holds its room.)
  const alpha = await stale.tickets.claim({ provider: "gpu", model: "alpha:7b", modelFootprintMiB: 9000 });
  expect(alpha.ok).toBe(true);
  // Its call will load alpha again: the fresh store counts that ticket as a load in flight.
  await fresh.providers.fresh();
  const beta = await fresh.tickets.claim({ provider: "gpu", model: "beta:7b", modelFootprintMiB: 9000 });
  expect(beta.ok).toBe(false);
  if (!beta.ok) {
    expect(beta.reason).toBe("no-room");
    expect(beta.budget).toMatchObject({ resident: 0, inFlight: 9000 });
  }
});
