// Offer keys (docs/rules/state.md §2.1, §10.1): written beside a state only when the models it
// offers change, removed with it, never by the kubemoot layout, skipped by whole-bucket readers;
// a store that follows per candidate sees the states of its candidates' providers only.
import { describe, expect, it } from "vitest";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { PROVIDER_STATE_BUCKET } from "./buckets.js";
import { decodeJson } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { offerCovers, offerDecoder, offerKey } from "./provider-offers.js";
import { openStateStore } from "./store.js";

async function stateKeys(kv: MemoryKvStore): Promise<Map<string, unknown>> {
  const b = await kv.bucket(PROVIDER_STATE_BUCKET, { history: 1, ttlMs: 0, maxValueBytes: 0, replicas: 1 });
  const out = new Map<string, unknown>();
  for (const k of await b.keys()) out.set(k, decodeJson((await b.get(k))!.value));
  return out;
}

describe("offer keys", () => {
  it("are written beside a state when its models change, and only then", async () => {
    const kv = new MemoryKvStore();
    const op = await openStateStore(kv);
    const writes: string[] = [];
    const b = await kv.bucket(PROVIDER_STATE_BUCKET, { history: 1, ttlMs: 0, maxValueBytes: 0, replicas: 1 });
    const w = await b.watch({ include: "updates", key: ">" });
    void (async () => {
      for await (const e of w) writes.push(`${e.operation} ${e.key}`);
    })();
    const s = providerState("rack.gpu-1", {
      availableModelFootprintsMiB: { b: 1, a: 2 },
      loadedModelFootprintsMiB: { c: 3 },
    });
    await op.providerWriter.publish(s);
    await op.providerWriter.publish({ ...s, activeCount: 3 });
    await op.providerWriter.publish({ ...s, availableModelFootprintsMiB: { a: 2 } });
    await op.providerWriter.remove("rack.gpu-1");
    await new Promise((r) => setTimeout(r, 20));
    w.stop();
    const o = offerKey("rack.gpu-1");
    expect(o).toBe("_o.rack_2egpu-1");
    expect(writes).toEqual([
      "PUT rack.gpu-1",
      `PUT ${o}`,
      "PUT rack.gpu-1",
      "PUT rack.gpu-1",
      `PUT ${o}`,
      `DEL ${o}`,
      "DEL rack.gpu-1",
    ]);
    await op.close();
  });

  it("hold the models offered, sorted; the kubemoot layout writes none", async () => {
    const scoped = new MemoryKvStore();
    const op = await openStateStore(scoped);
    await op.providerWriter.publish(
      providerState("gpu-1", {
        availableModelFootprintsMiB: { b: 1, a: 2 },
        loadedModelFootprintsMiB: { c: 3 },
      }),
    );
    expect((await stateKeys(scoped)).get("_o.gpu-1")).toEqual({ provider: "gpu-1", models: ["a", "b", "c"] });
    await op.close();
    const kubemoot = new MemoryKvStore();
    const old = await openStateStore(kubemoot, { keyLayout: "kubemoot" });
    await old.providerWriter.publish(providerState("gpu-1", { availableModelFootprintsMiB: { a: 2 } }));
    expect([...(await stateKeys(kubemoot)).keys()]).toEqual(["gpu-1"]);
    await old.close();
  });

  it("are read back by key; a value naming another provider is skipped", () => {
    const e = (key: string, value: unknown) => ({
      bucket: PROVIDER_STATE_BUCKET,
      key,
      value: new TextEncoder().encode(JSON.stringify(value)),
      revision: 1,
      createdMs: 0,
      operation: "PUT" as const,
    });
    expect(offerDecoder(e("_o.rack_2egpu-1", { models: ["z", "a", "a"] }))).toEqual({
      provider: "rack.gpu-1",
      models: ["a", "z"],
    });
    expect(offerDecoder(e("_o.gpu-1", { provider: "gpu-2", models: ["a"] }))).toBeUndefined();
    expect(offerDecoder(e("gpu-1", { models: ["a"] }))).toBeUndefined();
    expect(offerCovers({ provider: "p", models: [] }, "any")).toBe(true);
    expect(offerCovers({ provider: "p", models: ["a"] }, "b")).toBe(false);
  });

  it("scope a store that follows per candidate to the providers offering its candidates", async () => {
    const kv = new MemoryKvStore();
    const op = await openStateStore(kv);
    for (const [p, m] of [
      ["gpu-0", "m-a"],
      ["gpu-1", "m-b"],
    ] as const) {
      await op.providerWriter.publish(providerState(p, { availableModelFootprintsMiB: { [m]: 1 } }));
    }
    const sidecar = await openStateStore(kv, { ticketsScope: "candidates" });
    // Whole-bucket readers never take an offer key for a provider.
    expect((await op.providers.list()).map((s) => s.name).sort()).toEqual(["gpu-0", "gpu-1"]);
    expect(await sidecar.providers.list()).toEqual([]);
    expect([...sidecar.providers.offeredModels()].sort()).toEqual(["m-a", "m-b"]);
    expect((await sidecar.providers.list(["m-a"])).map((s) => s.name)).toEqual(["gpu-0"]);
    expect((await sidecar.providers.fleet()).map((s) => s.name).sort()).toEqual(["gpu-0", "gpu-1"]);
    await sidecar.close();
    await op.close();
  });
});
