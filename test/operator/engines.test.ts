// The operator in Kubernetes mode (against the FAKE API server, see README.md) with
// ModelProviders of several engines, served by the emulator's personalities over HTTP: a vLLM
// provider's probed state flows into its status and the shared state; one declared vLLM but
// served by Ollama gets EngineMatches=False (reason EngineMismatch) and ready=false; corrected,
// the condition turns True.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { type RunningOperator, startOperator } from "../../src/operator/index.js";
import { kubeConfigForServer } from "../../src/operator/kube/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { FakeApiServer, type Obj } from "./fake-apiserver/index.js";
import { waitFor } from "./helpers.js";

const V = "kubemoot.ai/v1alpha1";
const NS = "kubemoot";
let fake: FakeApiServer;
let state: StateStore;
let op: RunningOperator;
let vllm: EmulatorHandle;
let ollama: EmulatorHandle;

const provider = (name: string, engine: string, endpoint: string) => ({
  apiVersion: V,
  kind: "ModelProvider",
  metadata: { name, namespace: NS },
  spec: { type: "ollama", engine, endpoint },
});

interface Cond {
  type: string;
  status: string;
  reason: string;
  message: string;
}
const statusOf = (name: string) =>
  (fake.get(V, "ModelProvider", NS, name) as Obj | undefined)?.status as
    | { ready?: boolean; conditions?: Cond[]; capacity?: Record<string, unknown> }
    | undefined;
const engineCondition = (name: string) => statusOf(name)?.conditions?.find((c) => c.type === "EngineMatches");

beforeAll(async () => {
  vllm = await startEmulator({
    listen: "127.0.0.1:0",
    engine: "vllm",
    models: { "qwen3:8b": 4863 },
    contextLength: 8192,
    timeScale: 0.01,
  });
  ollama = await startEmulator({ listen: "127.0.0.1:0", models: { "qwen3:8b": 4863 }, timeScale: 0.01 });
  fake = await FakeApiServer.start();
  fake.apply(provider("gpu-vllm", "vllm", vllm.url));
  fake.apply(provider("gpu-wrong", "vllm", ollama.url));
  state = await openStateStore("memory");
  op = await startOperator({
    manifests: [],
    bindingsDir: "/nonexistent",
    state,
    logger: pino({ level: "silent" }),
    probeIntervalMs: 200,
    kubeConfig: kubeConfigForServer(fake.url),
  });
});

afterAll(async () => {
  await op?.stop();
  await state?.close();
  await fake?.close();
  await vllm?.close();
  await ollama?.close();
});

describe("the operator with engines (against the FAKE API server)", () => {
  it("publishes a vLLM provider's state and writes its capacity", async () => {
    const s = await waitFor(async () => await state.providers.get("gpu-vllm"), "gpu-vllm published", 10_000);
    expect(s).toMatchObject({ engine: "vllm", ready: true, loadedModels: ["qwen3:8b"], contextLength: 8192 });
    const st = await waitFor(
      () => (statusOf("gpu-vllm")?.ready === true ? statusOf("gpu-vllm") : undefined),
      "status",
    );
    expect(st?.capacity).toMatchObject({ contextLength: 8192, maxParallel: 256 });
    expect(engineCondition("gpu-vllm")).toBeUndefined();
  });

  it("a ModelProvider declared vllm but served by Ollama: EngineMatches False, ready false", async () => {
    const c = await waitFor(() => engineCondition("gpu-wrong"), "EngineMatches on gpu-wrong", 10_000);
    expect(c).toMatchObject({
      status: "False",
      reason: "EngineMismatch",
      message: `declared engine vllm, but ollama answers at ${ollama.url}`,
    });
    expect(statusOf("gpu-wrong")?.ready).toBe(false);
    expect((await state.providers.get("gpu-wrong"))?.ready).toBe(false);
  });

  it("corrected to ollama, it is ready and the condition turns True", async () => {
    fake.apply(provider("gpu-wrong", "ollama", ollama.url));
    await waitFor(() => engineCondition("gpu-wrong")?.status === "True", "EngineMatches True", 10_000);
    expect(engineCondition("gpu-wrong")?.reason).toBe("EngineMatches");
    await waitFor(() => statusOf("gpu-wrong")?.ready === true, "ready again", 10_000);
  });
});
