// Placement across engines through the sidecar as a real process (docs/rules/engines.md
// "Placement"): a real nats-server, two provider states written directly — an Ollama emulator,
// and a provider with `engine: "vllm"` whose endpoint is the emulator's vLLM personality behind a
// recording forwarder — and Place/Commit over gRPC with @grpc/grpc-js (not our server's library). The
// vLLM provider is taken warm for the model it serves, never for another, and never gets a
// request from the sidecar: no load, no unload, no keep-alive.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderState } from "../../src/core/shapes.js";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import {
  type Json,
  releaseSucceeded,
  type SchedulerClient,
  schedulerClient,
} from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const Q8 = "qwen3:8b";
const Q14 = "qwen3:14b";
const BIG = "big:20b";
const VL = "Qwen/Qwen3-8B"; // the vLLM server's served name: the same family as Q8, another name
const CATALOG = { [Q8]: 4863, [Q14]: 9000, [BIG]: 14000 };

let nats: NatsServer;
let store: StateStore;
let ollama: EmulatorHandle;
let behindVllm: EmulatorHandle;
let recorder: Server;
let recorderUrl: string;
const seenAtVllm: string[] = [];
let sidecar: SidecarProcess;
let client: SchedulerClient;

/** A real HTTP hop that records every request and forwards it to the emulator behind it. */
function startRecorder(target: URL): Promise<Server> {
  const s = createServer((req, res) => {
    seenAtVllm.push(`${req.method} ${req.url}`);
    const up = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s)));
}

function ollamaState(over: Partial<ProviderState> = {}): ProviderState {
  return {
    name: "gpu-a",
    endpoint: ollama.url,
    maxParallel: 1,
    activeCount: 0,
    queueDepth: 0,
    loadedModels: [],
    ready: true,
    lastProbedAt: new Date().toISOString(),
    totalVramMiB: 24563,
    loadedModelFootprintsMiB: {},
    availableModelFootprintsMiB: CATALOG,
    contextLength: 8192,
    loadedModelContextLengths: {},
    ...over,
  };
}

function vllmState(over: Partial<ProviderState> = {}): ProviderState {
  return {
    name: "vllm-a",
    endpoint: recorderUrl,
    engine: "vllm",
    maxParallel: 8,
    activeCount: 0,
    queueDepth: 0,
    // It also serves an idle model nobody uses: on an Ollama card, the first victim there is.
    loadedModels: [VL, "spare:7b"],
    ready: true,
    lastProbedAt: new Date().toISOString(),
    totalVramMiB: 81920,
    // The engine's preallocation, as a probe may report it (the card looks nearly full).
    loadedModelFootprintsMiB: { [VL]: 36000, "spare:7b": 36000 },
    availableModelFootprintsMiB: {},
    contextLength: 32768,
    loadedModelContextLengths: { [VL]: 32768, "spare:7b": 32768 },
    kvCacheUsage: 0.1,
    ...over,
  };
}

/** Writes both provider states directly (the sidecar's planner reads the state fresh). */
async function publish(a: ProviderState, v: ProviderState): Promise<void> {
  await store.providerWriter.publish(a);
  await store.providerWriter.publish(v);
}

const cands = (...list: [string, number][]): Json[] => list.map(([model, score]) => ({ model, score }));

async function place(candidates: Json[], extra: Json = {}): Promise<Json> {
  return client.call("Place", { agent: "crew/a1", candidates, promptTokens: 1000, ...extra });
}

async function release(p: Json): Promise<void> {
  expect((await releaseSucceeded(client, p)).released).toBe(true);
}

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  const emu = {
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: CATALOG,
    contextLength: 8192,
    timeScale: 0.01,
  };
  ollama = await startEmulator(emu);
  // The emulator's vLLM personality (engines-emulator): OpenAI routes only, one served model.
  behindVllm = await startEmulator({
    listen: "127.0.0.1:0",
    engine: "vllm",
    models: { [VL]: 4863 },
    timeScale: 0.01,
  });
  recorder = await startRecorder(new URL(behindVllm.url));
  recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  sidecar = await startSidecarProcess(["--nats", nats.url, "--agent", "crew/a1", "--proxy-listen", ""]);
  client = schedulerClient(sidecar.apiAddress);
});

afterAll(async () => {
  client?.close();
  const code = await sidecar?.stop();
  expect(code, sidecar?.output()).toBe(0);
  await new Promise((r) => recorder?.close(r));
  await ollama?.close();
  await behindVllm?.close();
  await store?.close();
  await nats?.dispose();
});

describe("placement across an Ollama card and a vLLM server", () => {
  it("takes the vLLM server warm for its model when the Ollama copy would need a load", async () => {
    await publish(ollamaState(), vllmState());
    const r = await place(cands([Q8, 80], [VL, 78]));
    expect(r.result, JSON.stringify(r)).toBe("placement");
    expect(r.placement).toMatchObject({ provider: "vllm-a", model: VL, coldLoad: false, evicted: [] });
    expect(r.placement.endpoint).toBe(recorderUrl);
    expect(Number(r.placement.contextLength)).toBe(32768);
    await release(r.placement);
  });

  it("never takes it for a model it does not serve: the Ollama card loads that one", async () => {
    const r = await place(cands([Q14, 80]));
    expect(r.placement).toMatchObject({ provider: "gpu-a", model: Q14, coldLoad: true });
    await release(r.placement);
    // With the Ollama card down, the 14b waits for it: the vLLM server (its card looks as if an
    // unload there would make room) is no place to load it.
    await publish(ollamaState({ ready: false }), vllmState());
    const refused = await place(cands([Q14, 80]), { phase: "triage" });
    expect(refused.result, JSON.stringify(refused)).toBe("refusal");
    expect(refused.refusal.reason).toBe("REASON_PROVIDER_UNAVAILABLE");
  });

  it("unloads on the Ollama card to make room, never on the vLLM server", async () => {
    // The Ollama card holds an idle 14b; the 20b needs its room. The vLLM server looks nearly
    // full of idle models, but it is not ours to unload.
    await publish(
      ollamaState({ loadedModels: [Q14], loadedModelFootprintsMiB: { [Q14]: 12224 } }),
      vllmState(),
    );
    const r = await place(cands([BIG, 80]));
    expect(r.result, JSON.stringify(r)).toBe("placement");
    expect(r.placement).toMatchObject({ provider: "gpu-a", model: BIG, coldLoad: true, evicted: [Q14] });
    await release(r.placement);
  });

  it("plans a thread on it without a pre-load, and pre-loads on the Ollama card", async () => {
    await publish(ollamaState(), vllmState());
    const onVllm = await client.call("Commit", {
      agent: "crew/a1",
      threadId: "t-vllm",
      candidates: cands([VL, 80]),
    });
    expect(onVllm.planned).toMatchObject({ provider: "vllm-a", model: VL, coldLoad: false });
    const onOllama = await client.call("Commit", {
      agent: "crew/a1",
      threadId: "t-ollama",
      candidates: cands([Q8, 80]),
    });
    expect(onOllama.planned).toMatchObject({ provider: "gpu-a", model: Q8, coldLoad: true });
    // The pre-load reached the Ollama card (its emulator has the model) ...
    await waitUntil(async () => {
      const s = (await (await fetch(`${ollama.url}/_emulator/state`)).json()) as {
        models: { name: string }[];
      };
      return s.models.some((m) => m.name === Q8);
    }, 5000);
    for (const threadId of ["t-vllm", "t-ollama"]) {
      await client.call("EndThread", { agent: "crew/a1", threadId });
    }
  });

  it("the vLLM server never received a request from the sidecar", () => {
    // ... and nothing at all reached the vLLM server: no /api/generate load, unload or keep-alive.
    expect(seenAtVllm).toEqual([]);
  });

  it("the recording hop works: a request through it reaches the vLLM personality and is seen", async () => {
    const res = await fetch(`${recorderUrl}/v1/models`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { id: string }[] };
    expect(body.data).toHaveLength(1); // the one model it serves
    expect(seenAtVllm).toEqual(["GET /v1/models"]);
  });
});
