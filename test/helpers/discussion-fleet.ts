// Two emulated GPUs of equal size probed by the operator as a process, over a real nats-server,
// with the example crew: the scaffolding of the end-to-end tests of per-discussion bindings
// that change residency and read what the discussion binder publishes (docs/rules/binding.md §9).
// Threads are opened as a runtime without a sidecar opens them (`kubemoot.discussion.<ns>.<t>.open`).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import {
  connectNatsKv,
  type DiscussionBinding,
  DiscussionBindings,
  type DiscussionPhase,
  encodeDiscussionEvent,
  type KvStore,
  openStateStore,
  type StateStore,
} from "../../src/state/index.js";
import { NatsServer } from "./nats-server.js";
import { repoRoot } from "./sidecar-process.js";
import { type StandaloneProcess, startManifestsOperator } from "./standalone-process.js";
import { waitUntil } from "./wait-until.js";

export const FLEET_AGENT = "crew-homelab/synthesizer";
export const FLEET_VRAM_MIB = 24563;
const CATALOG = { "qwen3:32b": 20000, "qwen3:14b": 9000 };

export interface DiscussionFleetOptions {
  /** Scheduling weight of gpu-a and gpu-b. */
  weights: { "gpu-a": number; "gpu-b": number };
  /** Keep the crew policy's topology spread (mulling and triage on different providers). */
  spread: boolean;
  /** Models loaded on a GPU before the operator starts. */
  residents?: Partial<Record<"gpu-a" | "gpu-b", string[]>>;
}

export interface DiscussionFleet {
  reader: DiscussionBindings;
  operator: StandaloneProcess;
  /** Opens a thread of the crew's coordinator (no load term: threads do not push each other). */
  open(threadId: string): void;
  /** Loads (or, with keep_alive 0, unloads) a model on a GPU through its Ollama API. */
  generate(gpu: string, body: Record<string, unknown>): Promise<void>;
  /** Until the published state of `gpu` lists exactly `loaded`. */
  residents(gpu: string, loaded: string[]): Promise<void>;
  /** Until the thread's phase has a value that `ok` accepts; returns it. */
  bound(
    threadId: string,
    ok: (b: DiscussionBinding) => boolean,
    what: string,
    phase?: DiscussionPhase,
  ): Promise<DiscussionBinding>;
  /**
   * Opens fresh threads until one is bound (mulling) to `provider`: the binder's snapshot then
   * holds the residency change (the reconcile that brings it follows the state's write by a
   * moment), and every live thread was bound again over it in that same run.
   */
  seenBy(provider: string): Promise<void>;
  close(): Promise<void>;
}

function model(provider: string): string {
  return `apiVersion: kubemoot.ai/v1alpha1
kind: Model
metadata:
  name: qwen3-14b-${provider}
  namespace: kubemoot
  labels: { family: qwen3, params: "14B", capability/tool-calling: "true", latencyClass: medium }
spec: { model: "qwen3:14b", providerRef: ${provider}, vramMib: 9216 }
status: { ready: true }
`;
}

function provider(name: string, url: string, weight: number): string {
  return `apiVersion: kubemoot.ai/v1alpha1
kind: ModelProvider
metadata: { name: ${name}, namespace: kubemoot }
spec:
  type: ollama
  endpoint: ${url}
  scheduling: { weight: ${weight}, memoryMiB: ${FLEET_VRAM_MIB} }
status: { ready: true }
`;
}

export async function startDiscussionFleet(o: DiscussionFleetOptions): Promise<DiscussionFleet> {
  const nats = await NatsServer.start();
  const kv: KvStore = await connectNatsKv({ servers: nats.url });
  const reader = await DiscussionBindings.open(kv);
  const states: StateStore = await openStateStore(nats.url);
  const gpus: Record<string, EmulatorHandle> = {};
  for (const name of ["gpu-a", "gpu-b"] as const)
    gpus[name] = await startEmulator({
      listen: "127.0.0.1:0",
      vramMiB: FLEET_VRAM_MIB,
      models: CATALOG,
      contextLength: 8192,
      timeScale: 0.01,
      keepAlive: -1,
    });
  const generate = async (gpu: string, body: Record<string, unknown>) => {
    const res = await fetch(`${gpus[gpu]!.url}/api/generate`, { method: "POST", body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    await res.text();
  };
  for (const [gpu, models] of Object.entries(o.residents ?? {}))
    for (const m of models ?? []) await generate(gpu, { model: m });
  const dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-discussion-fleet-"));
  const manifests = path.join(dir, "manifests");
  mkdirSync(manifests, { recursive: true });
  for (const f of ["crew/namespace.yaml", "crew/agents.yaml"])
    copyFileSync(path.join(repoRoot, "examples", f), path.join(manifests, f.replace("/", "-")));
  const policy = readFileSync(path.join(repoRoot, "examples/crew/policy.yaml"), "utf8");
  expect(policy).toMatch(/^ {2}topologySpread:/m);
  writeFileSync(
    path.join(manifests, "policy.yaml"),
    o.spread ? policy : policy.replace(/^ {2}topologySpread:[\s\S]*$/m, ""),
  );
  writeFileSync(path.join(manifests, "models.yaml"), `${model("gpu-a")}---\n${model("gpu-b")}`);
  writeFileSync(
    path.join(manifests, "providers.yaml"),
    `${provider("gpu-a", gpus["gpu-a"]!.url, o.weights["gpu-a"])}---\n${provider("gpu-b", gpus["gpu-b"]!.url, o.weights["gpu-b"])}`,
  );
  const operator = await startManifestsOperator({
    manifests,
    outDir: path.join(dir, "out"),
    natsUrl: nats.url,
    probeMs: 300,
  });

  const open = (threadId: string) => {
    const m = encodeDiscussionEvent({ kind: "open", threadId, agent: FLEET_AGENT })!;
    kv.messages.publish(m.subject, m.data);
  };
  const bound: DiscussionFleet["bound"] = async (threadId, ok, what, phase = "mulling") => {
    await waitUntil(
      () => {
        const b = reader.get(threadId, phase);
        return b !== undefined && ok(b);
      },
      20_000,
      `${what}\n${operator.output()}`,
    );
    return reader.get(threadId, phase)!;
  };
  let fresh = 0;
  return {
    reader,
    operator,
    open,
    generate,
    bound,
    async residents(gpu, loaded) {
      await waitUntil(
        async () => {
          const s = (await states.providers.list()).find((p) => p.name === gpu);
          return JSON.stringify([...(s?.loadedModels ?? [])].sort()) === JSON.stringify(loaded);
        },
        20_000,
        `${gpu}'s published residents ${JSON.stringify(loaded)}`,
      );
    },
    async seenBy(provider) {
      for (let tries = 0; ; tries++) {
        expect(tries, `no fresh thread bound to ${provider}`).toBeLessThan(40);
        const id = `fresh-${fresh++}`;
        open(id);
        const b = await bound(id, (v) => v.kind === "binding", `${id} bound`);
        if (b.provider === provider) return;
      }
    },
    async close() {
      await operator.stop();
      await states.close();
      reader.close();
      await kv.close();
      for (const g of Object.values(gpus)) await g.close();
      await nats.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
