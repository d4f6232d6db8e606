import { afterEach, describe, expect, it } from "vitest";
import { ManualClock, providerState } from "../../test/helpers/state-fixtures.js";
import type { Logger } from "../log/index.js";
import { PROVIDER_STATE_BUCKET } from "./buckets.js";
import { encodeJson } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { isStale, parseProviderState, providerStateJson } from "./provider-state-codec.js";
import { openStateStore, type StateStore } from "./store.js";

// Kubemoot's example provider state, byte for byte (its fields: docs/rules/state.md §2.1).
const KUBEMOOT_STATE =
  '{"name":"ollama-rig1","endpoint":"http://ollama.ollama-rig1:11434","maxParallel":1,' +
  '"activeCount":0,"queueDepth":0,"loadedModels":[],"ready":true,"lastProbedAt":"2026-06-11T00:00:00Z",' +
  '"totalVramMiB":24563,"loadedModelFootprintsMiB":{},"availableModelFootprintsMiB":{"qwen3:32b":27847,"qwen3:8b":4863}}';

describe("provider state parsing", () => {
  it("reads Kubemoot's example; missing fields take zero values", () => {
    const s = parseProviderState(JSON.parse(KUBEMOOT_STATE), "ollama-rig1")!;
    expect(s).toMatchObject({
      name: "ollama-rig1",
      totalVramMiB: 24563,
      ready: true,
      availableModelFootprintsMiB: { "qwen3:32b": 27847, "qwen3:8b": 4863 },
      contextLength: 0,
      loadedModelContextLengths: {},
    });
  });

  it("ignores unknown fields, fixes mistyped ones, names the provider after its key", () => {
    const s = parseProviderState(
      {
        totalVramMiB: "lots",
        extra: { deep: 1 },
        loadedModels: ["a", 3],
        loadedModelFootprintsMiB: { a: 5, b: "x" },
      },
      "rig2",
    )!;
    expect(s.name).toBe("rig2");
    expect(s.totalVramMiB).toBe(0);
    expect(s.maxParallel).toBe(1);
    expect(s.loadedModels).toEqual(["a"]);
    expect(s.loadedModelFootprintsMiB).toEqual({ a: 5 });
    expect(s).not.toHaveProperty("extra");
    expect(parseProviderState([1, 2], "x")).toBeUndefined();
    expect(parseProviderState("str", "x")).toBeUndefined();
  });

  it("carries the engine extensions; an Ollama provider's value has none of them", () => {
    const ollama = parseProviderState(JSON.parse(KUBEMOOT_STATE), "ollama-rig1")!;
    expect(ollama.engine).toBeUndefined();
    expect(Object.keys(providerStateJson(ollama))).not.toContain("engine");
    const vllm = parseProviderState(
      { ...JSON.parse(KUBEMOOT_STATE), engine: "vllm", kvCacheUsage: 1.7, tokenize: true },
      "k",
    )!;
    expect(vllm).toMatchObject({ engine: "vllm", kvCacheUsage: 1, tokenize: true });
    expect(providerStateJson(vllm)).toMatchObject({ engine: "vllm", kvCacheUsage: 1, tokenize: true });
    // A newer operator's engine is served as OpenAI-compatible and never driven.
    expect(parseProviderState({ engine: "tgi" }, "k")!.engine).toBe("openai");
    expect(parseProviderState({ engine: "ollama" }, "k")!.engine).toBeUndefined();
    expect(parseProviderState({ kvCacheUsage: "full" }, "k")!.kvCacheUsage).toBeUndefined();
  });

  it("carries single-slot models when there are some, and only then", () => {
    const ollama = parseProviderState(JSON.parse(KUBEMOOT_STATE), "ollama-rig1")!;
    expect(ollama.singleSlotModels).toBeUndefined();
    expect(Object.keys(providerStateJson(ollama))).not.toContain("singleSlotModels");
    const raw = { ...JSON.parse(KUBEMOOT_STATE), singleSlotModels: ["nomic-embed-text:latest", 7] };
    const withEmbed = parseProviderState(raw, "k")!;
    expect(withEmbed.singleSlotModels).toEqual(["nomic-embed-text:latest"]);
    expect(providerStateJson(withEmbed).singleSlotModels).toEqual(["nomic-embed-text:latest"]);
    expect(parseProviderState({ singleSlotModels: [] }, "k")!.singleSlotModels).toBeUndefined();
    expect(parseProviderState({ singleSlotModels: "x" }, "k")!.singleSlotModels).toBeUndefined();
  });

  it("is stale only with a parsable lastProbedAt older than the limit", () => {
    const now = Date.parse("2026-06-11T00:10:00Z");
    const at = (lastProbedAt: string) => isStale(providerState("p", { lastProbedAt }), now, 300_000);
    expect(at("2026-06-11T00:04:59Z")).toBe(true);
    expect(at("2026-06-11T00:05:01Z")).toBe(false);
    expect(at("")).toBe(false);
    expect(at("not a date")).toBe(false);
  });
});

describe("provider state reader", () => {
  const stores: StateStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it("drops stale entries, skips unreadable ones with one warning each, and follows changes", async () => {
    const clock = new ManualClock(Date.parse("2026-06-11T00:01:00Z"));
    const warnings: object[] = [];
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      error: () => undefined,
      warn: (o) => warnings.push(o),
    };
    const kv = new MemoryKvStore({ now: clock.now });
    const store = await openStateStore(kv, { now: clock.now, logger });
    stores.push(store);
    const bucket = await kv.bucket(PROVIDER_STATE_BUCKET, {
      history: 1,
      ttlMs: 0,
      maxValueBytes: 0,
      replicas: 1,
    });
    await bucket.put("ollama-rig1", new TextEncoder().encode(KUBEMOOT_STATE));
    await bucket.put("broken", new TextEncoder().encode("{not json"));
    await bucket.put("array", encodeJson([1]));
    await store.providerWriter.publish(providerState("old", { lastProbedAt: "2026-06-10T23:00:00Z" }));
    expect((await store.providers.list()).map((s) => s.name)).toEqual(["ollama-rig1"]);
    await store.providers.list();
    expect(warnings.length).toBe(2);
    expect(await store.providers.get("old")).toBeUndefined();
    clock.advance(5 * 60_000);
    expect(await store.providers.get("ollama-rig1")).toBeUndefined(); // now stale too
    await store.providerWriter.publish(
      providerState("ollama-rig1", { lastProbedAt: new Date(clock.ms).toISOString() }),
    );
    expect((await store.providers.get("ollama-rig1"))?.endpoint).toBe("http://ollama-rig1:11434");
    await store.providerWriter.remove("ollama-rig1");
    expect(await store.providers.list()).toEqual([]);
  });

  it("writes Kubemoot's field names in Kubemoot's order", async () => {
    const kv = new MemoryKvStore();
    const store = await openStateStore(kv);
    stores.push(store);
    await store.providerWriter.publish(JSON.parse(KUBEMOOT_STATE));
    const bucket = await kv.bucket(PROVIDER_STATE_BUCKET, {
      history: 1,
      ttlMs: 0,
      maxValueBytes: 0,
      replicas: 1,
    });
    const text = new TextDecoder().decode((await bucket.get("ollama-rig1"))!.value);
    expect(text.startsWith(KUBEMOOT_STATE.slice(0, -1))).toBe(true);
  });
});
