// Issue 16, item 3: a dead provider is unavailable, not busy. Two sidecar processes on one real
// nats-server, two emulated GPUs, the provider publisher probing rarely (once a minute), so that
// what stops the sidecars from choosing a dead GPU is what they see themselves, not a probe.
// The official Ollama client talks to one sidecar's proxy; a grpc-js client to the other's API.
import { Ollama } from "ollama";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { allTicketsReleased } from "../helpers/ollama-proxy-client.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

let nats: NatsServer;
let store: StateStore;
let publisher: ProviderPublisher;
const gpus = new Map<string, EmulatorHandle>();
let proxySidecar: SidecarProcess;
let apiSidecar: SidecarProcess;
let api: SchedulerClient;

const cands = [{ model: "qwen3:8b", score: 50 }];

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  for (const name of ["gpu-a", "gpu-b"]) {
    gpus.set(
      name,
      await startEmulator({
        listen: "127.0.0.1:0",
        vramMiB: 24563,
        models: { "qwen3:8b": 4863 },
        contextLength: 8192,
        timeScale: 0.01,
      }),
    );
  }
  publisher = new ProviderPublisher({ sink: store.providerWriter, intervalMs: 60_000 });
  publisher.start();
  await publisher.setProviders(
    [...gpus].map(([name, e]) => ({
      name,
      endpoint: e.url,
      totalVramMiB: 24563,
      maxParallel: 4,
      contextLength: 8192,
    })),
  );
  // The model is warm on gpu-a only: every sidecar's first choice.
  const warm = await fetch(`${gpus.get("gpu-a")!.url}/api/generate`, {
    method: "POST",
    body: JSON.stringify({ model: "qwen3:8b" }),
  });
  await warm.text();
  await publisher.probeNow();
  const args = ["--nats", nats.url, "--proxy-listen", "127.0.0.1:0"];
  proxySidecar = await startSidecarProcess([...args, "--agent", "crew/proxied"]);
  apiSidecar = await startSidecarProcess([...args, "--agent", "crew/api"]);
  api = schedulerClient(apiSidecar.apiAddress);
});

afterAll(async () => {
  api?.close();
  expect(await proxySidecar?.stop()).toBe(0);
  expect(await apiSidecar?.stop()).toBe(0);
  await publisher?.stop();
  for (const e of gpus.values()) await e.close();
  await store?.close();
  await nats?.dispose();
});

async function placeOnce(): Promise<{ provider: string; reason: string }> {
  const r = await api.call("Place", { agent: "crew/api", candidates: cands, promptChars: 100 });
  if (r.result === "placement") {
    await api.call("Release", { ticketId: r.placement.ticketId });
    return { provider: r.placement.provider, reason: "" };
  }
  return { provider: "", reason: r.refusal.reason };
}

it("a dead GPU is left at once by the sidecar that saw it, and by the others through the shared state", async () => {
  expect((await placeOnce()).provider).toBe("gpu-a");
  await gpus.get("gpu-a")!.close();

  // The proxied call lands on gpu-a (still warm in every published state), is refused the
  // connection, and is placed again: the client gets its answer from gpu-b.
  const res = await fetch(`http://${proxySidecar.proxyAddress}/api/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "qwen3:8b", stream: false, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-kubemoot-provider")).toBe("gpu-b");
  await res.text();

  // The sidecar that saw it marked gpu-a suspect in the shared state; the other one, which
  // never talked to gpu-a, stops choosing it — without any new probe.
  await waitUntil(
    async () => (await store.tickets.everything()).suspects.has("gpu-a"),
    1_000,
    "suspect mark",
  );
  const probed = (await store.providers.get("gpu-a"))?.lastProbedAt;
  for (let i = 0; i < 5; i++) expect((await placeOnce()).provider).toBe("gpu-b");
  expect((await store.providers.get("gpu-a"))?.lastProbedAt).toBe(probed);
});

it("with every GPU down, the answer is unavailable at once, never busy, and the proxy does not wait blind", async () => {
  await gpus.get("gpu-b")!.close();
  const ollama = new Ollama({ host: `http://${proxySidecar.proxyAddress}` });
  const started = Date.now();
  const err = await ollama.chat({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] }).then(
    () => undefined,
    (e: unknown) => e as { status_code?: number; error?: string },
  );
  expect(err?.status_code).toBe(503);
  expect(err?.error).toMatch(/reachable/);
  // The wait limit is 90 s; a blind wait would take that long.
  expect(Date.now() - started).toBeLessThan(10_000);
  const raw = await fetch(`http://${proxySidecar.proxyAddress}/api/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "qwen3:8b", stream: false, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(raw.status).toBe(503);
  expect(raw.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(((await raw.json()) as { reason: string }).reason).toBe("provider-unavailable");
  await waitUntil(
    async () => (await store.tickets.everything()).suspects.has("gpu-b"),
    1_000,
    "suspect mark",
  );
  expect(await placeOnce()).toEqual({ provider: "", reason: "REASON_PROVIDER_UNAVAILABLE" });
  // Nothing claimed on the dead GPUs is left behind.
  await allTicketsReleased(store);
});
