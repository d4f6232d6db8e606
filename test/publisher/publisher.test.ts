// The provider publisher against two emulators (over HTTP) and a real nats-server: what it
// publishes matches /api/ps after loads and unloads, a stopped emulator turns ready=false
// after consecutive failed probes, and a restarted one recovers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderState } from "../../src/core/index.js";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";

const CATALOG = { "qwen3:14b": 9000, "qwen3:8b": 4863 };
let nats: NatsServer;
let store: StateStore;
let publisher: ProviderPublisher;
let a: EmulatorHandle;
let b: EmulatorHandle;

async function post(url: string, body: unknown): Promise<void> {
  const res = await fetch(url, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
}

async function published(name: string): Promise<ProviderState> {
  const s = await store.providers.get(name);
  if (!s) throw new Error(`no state for ${name}`);
  return s;
}

async function psOf(e: EmulatorHandle) {
  return (
    (await (await fetch(`${e.url}/api/ps`)).json()) as {
      models: { name: string; size_vram: number; context_length: number }[];
    }
  ).models;
}

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  a = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 32605,
    models: CATALOG,
    timeScale: 0.01,
    dcgm: true,
  });
  b = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    // An embedding model: Ollama runs it with one slot whatever OLLAMA_NUM_PARALLEL says.
    models: { ...CATALOG, "nomic-embed-text": 262 },
    timeScale: 0.01,
    numParallel: 2,
  });
  publisher = new ProviderPublisher({ sink: store.providerWriter, intervalMs: 100, probeTimeoutMs: 1000 });
  await publisher.setProviders([
    { name: "gpu-a", endpoint: a.url, dcgmUrl: `${a.url}/metrics` },
    { name: "gpu-b", endpoint: b.url, totalVramMiB: 24563, maxParallel: 2 },
  ]);
  publisher.start();
  await publisher.probeNow();
});

afterAll(async () => {
  await publisher?.stop();
  await a?.close();
  await b?.close();
  await store?.close();
  await nats?.dispose();
});

describe("provider publisher", () => {
  it("publishes totals (DCGM or configured), slots and on-disk sizes", async () => {
    const sa = await published("gpu-a");
    expect(sa.totalVramMiB).toBe(32605); // from the emulator's DCGM /metrics
    expect(sa.ready).toBe(true);
    expect(sa.maxParallel).toBe(1);
    expect(sa.availableModelFootprintsMiB).toEqual({ "qwen3:14b": 9000, "qwen3:8b": 4863 });
    expect(sa.loadedModels).toEqual([]);
    const sb = await published("gpu-b");
    expect(sb.totalVramMiB).toBe(24563);
    expect(sb.maxParallel).toBe(2);
  });

  it("publishes the models that run with one slot (/api/show without completion)", async () => {
    const sb = await published("gpu-b");
    expect(sb.singleSlotModels).toEqual(["nomic-embed-text:latest"]);
    const shown = (await (
      await fetch(`${b.url}/api/show`, {
        method: "POST",
        body: JSON.stringify({ model: "nomic-embed-text" }),
      })
    ).json()) as { capabilities: string[] };
    expect(shown.capabilities).not.toContain("completion");
    expect((await published("gpu-a")).singleSlotModels).toBeUndefined();
  });

  it("follows loads and unloads: footprints and contexts equal /api/ps", async () => {
    await post(`${a.url}/api/generate`, { model: "qwen3:14b", options: { num_ctx: 4096 } });
    await publisher.probeNow("gpu-a");
    const ps = await psOf(a);
    const s = await published("gpu-a");
    expect(s.loadedModels).toEqual(["qwen3:14b"]);
    expect(s.loadedModelFootprintsMiB["qwen3:14b"]).toBe(Math.ceil(ps[0]!.size_vram / 1048576));
    expect(s.loadedModelContextLengths["qwen3:14b"]).toBe(4096);
    expect(s.availableModelFootprintsMiB).toEqual({ "qwen3:8b": 4863 });

    await post(`${a.url}/api/generate`, { model: "qwen3:14b", keep_alive: 0 });
    await publisher.probeNow("gpu-a");
    const after = await published("gpu-a");
    expect(after.loadedModels).toEqual([]);
    expect(after.loadedModelFootprintsMiB).toEqual({});
  });

  it("marks a stopped provider not ready, and a restarted one ready again", async () => {
    const port = b.port;
    await b.close();
    // Three failed probes in a row (interval 100 ms) turn it not ready.
    await waitFor(async () => (await published("gpu-b")).ready === false);
    b = await startEmulator({
      listen: `127.0.0.1:${port}`,
      vramMiB: 24563,
      models: CATALOG,
      timeScale: 0.01,
    });
    await waitFor(async () => (await published("gpu-b")).ready === true);
    expect((await published("gpu-a")).ready).toBe(true);
  });

  it("unpublishes a provider that is no longer listed", async () => {
    await publisher.setProviders([{ name: "gpu-a", endpoint: a.url, dcgmUrl: `${a.url}/metrics` }]);
    await waitFor(async () => (await store.providers.get("gpu-b")) === undefined);
  });
});

async function waitFor(cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}
