// The provider publisher with a mixed fleet (an Ollama emulator beside the vLLM, llama.cpp and
// SGLang personalities, over HTTP) and a real nats-server: each provider's state is read back
// from the KV bucket with the engine extensions, the Ollama one without any; a provider
// declared as the wrong engine is published ready=false at the first probe and listed by
// engineMismatches(), and is ready again once its declaration is corrected.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderState } from "../../src/core/index.js";
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher, type PublishedProvider } from "../../src/publisher/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";

let nats: NatsServer;
let store: StateStore;
let publisher: ProviderPublisher;
const emus: Record<string, EmulatorHandle> = {};

const start = async (engine: EmulatorOptions["engine"], more: EmulatorOptions = {}) =>
  startEmulator({
    listen: "127.0.0.1:0",
    engine,
    models: { "qwen3:8b": 4863 },
    vramMiB: 24_563,
    timeScale: 0.01,
    ...more,
  });

async function published(name: string): Promise<ProviderState> {
  const s = await store.providers.get(name);
  if (!s) throw new Error(`no state for ${name}`);
  return s;
}

const fleet = (): PublishedProvider[] => [
  { name: "gpu-ollama", endpoint: emus.ollama!.url, totalVramMiB: 24_563 },
  { name: "gpu-vllm", endpoint: emus.vllm!.url, engine: "vllm", dcgmUrl: `${emus.dcgm!.url}/metrics` },
  { name: "gpu-llamacpp", endpoint: emus.llamacpp!.url, engine: "llamacpp", totalVramMiB: 24_563 },
  { name: "gpu-sglang", endpoint: emus.sglang!.url, engine: "sglang", totalVramMiB: 24_563 },
];

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  emus.ollama = await start("ollama");
  // The personalities serve no DCGM series; a DCGM exporter is its own server anyway (here an
  // Ollama emulator's /metrics, for a 32 GiB card).
  emus.dcgm = await start("ollama", { dcgm: true, vramMiB: 32_605 });
  emus.vllm = await start("vllm", { contextLength: 8192 });
  emus.llamacpp = await start("llamacpp", { contextLength: 4096, slots: 4 });
  emus.sglang = await start("sglang", { contextLength: 2048, slots: 8 });
  // A long interval: the tests probe when they choose (probeNow).
  publisher = new ProviderPublisher({ sink: store.providerWriter, intervalMs: 60_000, probeTimeoutMs: 2000 });
  await publisher.setProviders(fleet());
  await publisher.probeNow();
});

afterAll(async () => {
  await publisher?.stop();
  await Promise.all(Object.values(emus).map((e) => e.close()));
  await store?.close();
  await nats?.dispose();
});

describe("publishing a mixed fleet", () => {
  it("an Ollama provider's state has no engine extension", async () => {
    const s = await published("gpu-ollama");
    expect(s.ready).toBe(true);
    expect(s).not.toHaveProperty("engine");
    expect(s).not.toHaveProperty("kvCacheUsage");
    expect(s).not.toHaveProperty("tokenize");
    expect(s.availableModelFootprintsMiB).toEqual({ "qwen3:8b": 4863 });
  });

  it("a vLLM provider: its model loaded, its context, KV cache, /tokenize, DCGM VRAM, 256 slots", async () => {
    expect(await published("gpu-vllm")).toMatchObject({
      ready: true,
      engine: "vllm",
      loadedModels: ["qwen3:8b"],
      loadedModelContextLengths: { "qwen3:8b": 8192 },
      contextLength: 8192,
      availableModelFootprintsMiB: {},
      loadedModelFootprintsMiB: { "qwen3:8b": 32_605 },
      totalVramMiB: 32_605,
      maxParallel: 256,
      activeCount: 0,
      queueDepth: 0,
      kvCacheUsage: 0,
      tokenize: true,
    });
  });

  it("llama.cpp and SGLang providers: their own slots and context", async () => {
    const l = await published("gpu-llamacpp");
    expect(l).toMatchObject({
      engine: "llamacpp",
      maxParallel: 4,
      contextLength: 4096,
      tokenize: true,
      ready: true,
    });
    expect(l).not.toHaveProperty("kvCacheUsage"); // current llama.cpp builds export none
    expect(await published("gpu-sglang")).toMatchObject({
      engine: "sglang",
      maxParallel: 8,
      contextLength: 2048,
      kvCacheUsage: 0,
      ready: true,
    });
    expect(publisher.engineMismatches().size).toBe(0);
  });

  it("a wrong engine declared: ready=false at the first probe, named in engineMismatches()", async () => {
    const wrong = fleet().map((p) =>
      p.name === "gpu-vllm"
        ? { ...p, engine: "sglang" as const }
        : p.name === "gpu-ollama"
          ? { ...p, engine: "vllm" as const }
          : p,
    );
    await publisher.setProviders(wrong);
    await publisher.probeNow();
    expect(await published("gpu-vllm")).toMatchObject({ ready: false, engine: "sglang" });
    expect((await published("gpu-ollama")).ready).toBe(false);
    expect(Object.fromEntries(publisher.engineMismatches())).toEqual({
      "gpu-vllm": {
        declared: "sglang",
        detected: "vllm",
        message: expect.stringContaining("declared sglang"),
      },
      "gpu-ollama": {
        declared: "vllm",
        detected: "ollama",
        message: expect.stringContaining("declared vllm"),
      },
    });
    // The others are untouched.
    expect((await published("gpu-sglang")).ready).toBe(true);

    await publisher.setProviders(fleet());
    await publisher.probeNow();
    expect((await published("gpu-vllm")).ready).toBe(true);
    const back = await published("gpu-ollama");
    expect(back.ready).toBe(true);
    expect(back).not.toHaveProperty("engine");
    expect(publisher.engineMismatches().size).toBe(0);
  });

  it("a mismatch stands when the provider's entry is rebuilt for another setting", async () => {
    const emu = await start("ollama");
    const own = new ProviderPublisher({
      sink: store.providerWriter,
      intervalMs: 60_000,
      probeTimeoutMs: 2000,
    });
    const declared = {
      name: "gpu-rebuilt",
      endpoint: emu.url,
      engine: "vllm" as const,
      totalVramMiB: 24_563,
    };
    try {
      await own.setProviders([declared]);
      await own.probeNow();
      expect(own.engineMismatches().get("gpu-rebuilt")).toMatchObject({
        declared: "vllm",
        detected: "ollama",
      });
      // The operator hands over new settings (a probed maxParallel, say): no probe has run since.
      const rebuilt = own.setProviders([{ ...declared, maxParallel: 4 }]);
      expect(own.engineMismatches().get("gpu-rebuilt")).toMatchObject({
        declared: "vllm",
        detected: "ollama",
      });
      await rebuilt;
    } finally {
      await own.stop();
      await emu.close();
      await store.providerWriter.remove("gpu-rebuilt").catch(() => undefined);
    }
  });

  it("a mismatch stands through probes that get no answer, until one succeeds as declared", async () => {
    const emu = await start("ollama");
    const port = new URL(emu.url).port;
    const own = new ProviderPublisher({
      sink: store.providerWriter,
      intervalMs: 60_000,
      probeTimeoutMs: 2000,
    });
    try {
      await own.setProviders([
        { name: "gpu-silent", endpoint: emu.url, engine: "vllm", totalVramMiB: 24_563 },
      ]);
      await own.probeNow();
      expect(own.engineMismatches().get("gpu-silent")).toMatchObject({
        declared: "vllm",
        detected: "ollama",
      });
      // The server goes away: connections are refused, which is no word on its engine.
      await emu.close();
      for (let i = 0; i < 3; i++) await own.probeNow();
      expect(own.engineMismatches().get("gpu-silent")).toMatchObject({
        declared: "vllm",
        detected: "ollama",
      });
      expect((await published("gpu-silent")).ready).toBe(false);
      // A vLLM server at that address: the declaration holds now.
      const back = await start("vllm", { listen: `127.0.0.1:${port}`, contextLength: 8192 });
      try {
        await own.probeNow();
        expect(own.engineMismatches().size).toBe(0);
        expect((await published("gpu-silent")).ready).toBe(true);
      } finally {
        await back.close();
      }
    } finally {
      await own.stop();
      await store.providerWriter.remove("gpu-silent").catch(() => undefined);
    }
  });
});
