// Per-discussion bindings follow residency only past the hysteresis margin (docs/rules/binding.md
// §3, §9), end to end: a real nats-server, the operator as a process probing two emulated GPUs
// of equal size, and a thread opened as a runtime opens it (`kubemoot.discussion.<t>.open`).
// The numbers (mulling, the crew's coordinator: no load term; no topology spread): gpu-a weighs 50, gpu-b 58; the
// capacity term is 20 on an empty card and 1 with qwen3:32b resident. So at first gpu-a scores
// 70 and gpu-b, holding the 32b, 59: the thread binds to gpu-a. The 32b is evicted from gpu-b
// (elsewhere): gpu-b scores 78, better by 8, within the margin of 25, and the thread stays,
// although a thread bound afresh now takes gpu-b. Then the 32b is loaded on gpu-a: 51 against
// 78, past the margin, and the thread moves.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import {
  connectNatsKv,
  type DiscussionBinding,
  DiscussionBindings,
  encodeDiscussionEvent,
  type KvStore,
  openStateStore,
  type StateStore,
} from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { repoRoot } from "../helpers/sidecar-process.js";
import { type StandaloneProcess, startOperatorProcess } from "../helpers/standalone-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const AGENT = "crew-homelab/synthesizer";
let nats: NatsServer;
let kv: KvStore;
let reader: DiscussionBindings;
let states: StateStore;
const gpus: Record<string, EmulatorHandle> = {};
let dir: string;
let operator: StandaloneProcess;

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

function provider(name: string, weight: number): string {
  return `apiVersion: kubemoot.ai/v1alpha1
kind: ModelProvider
metadata: { name: ${name}, namespace: kubemoot }
spec:
  type: ollama
  endpoint: ${gpus[name]!.url}
  scheduling: { weight: ${weight}, memoryMiB: 24563 }
status: { ready: true }
`;
}

async function generate(gpu: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${gpus[gpu]!.url}/api/generate`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
}

/** Until the published state of `gpu` lists exactly `loaded`. */
async function residents(gpu: string, loaded: string[]): Promise<void> {
  await waitUntil(
    async () => {
      const s = (await states.providers.list()).find((p) => p.name === gpu);
      return JSON.stringify([...(s?.loadedModels ?? [])].sort()) === JSON.stringify(loaded);
    },
    20_000,
    `${gpu}'s published residents ${JSON.stringify(loaded)}`,
  );
}

function open(threadId: string): void {
  const m = encodeDiscussionEvent({ kind: "open", threadId, agent: AGENT })!;
  kv.messages.publish(m.subject, m.data);
}

async function bound(threadId: string, ok: (b: DiscussionBinding) => boolean, what: string) {
  await waitUntil(
    () => {
      const b = reader.get(threadId, "mulling");
      return b !== undefined && ok(b);
    },
    20_000,
    `${what}\n${operator.output()}`,
  );
  return reader.get(threadId, "mulling")!;
}

beforeAll(async () => {
  nats = await NatsServer.start();
  kv = await connectNatsKv({ servers: nats.url });
  reader = await DiscussionBindings.open(kv);
  states = await openStateStore(nats.url);
  for (const name of ["gpu-a", "gpu-b"])
    gpus[name] = await startEmulator({
      listen: "127.0.0.1:0",
      vramMiB: 24563,
      models: { "qwen3:32b": 20000, "qwen3:14b": 9000 },
      contextLength: 8192,
      timeScale: 0.01,
      keepAlive: -1,
    });
  await generate("gpu-b", { model: "qwen3:32b" });
  dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-hysteresis-"));
  const manifests = path.join(dir, "manifests");
  mkdirSync(manifests, { recursive: true });
  for (const f of ["crew/namespace.yaml", "crew/agents.yaml"])
    copyFileSync(path.join(repoRoot, "examples", f), path.join(manifests, f.replace("/", "-")));
  // The crew's policy without its topology spread, which would move mulling off triage's card.
  const policy = readFileSync(path.join(repoRoot, "examples/crew/policy.yaml"), "utf8");
  expect(policy).toMatch(/^ {2}topologySpread:/m);
  writeFileSync(path.join(manifests, "policy.yaml"), policy.replace(/^ {2}topologySpread:[\s\S]*$/m, ""));
  writeFileSync(path.join(manifests, "models.yaml"), `${model("gpu-a")}---\n${model("gpu-b")}`);
  writeFileSync(
    path.join(manifests, "providers.yaml"),
    `${provider("gpu-a", 50)}---\n${provider("gpu-b", 58)}`,
  );
  operator = await startOperatorProcess([
    "--manifests",
    manifests,
    "--bindings-dir",
    path.join(dir, "out"),
    "--nats",
    nats.url,
    "--probe-interval-ms",
    "300",
  ]);
}, 60_000);

afterAll(async () => {
  await operator?.stop();
  await states?.close();
  await reader?.close();
  await kv?.close();
  for (const g of Object.values(gpus)) await g.close();
  await nats?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let fresh = 0;
/**
 * Opens fresh threads until one is bound to `provider`: the binder's snapshot then holds the
 * residency change (the reconcile that brings it follows the state's write by a moment), and
 * every live thread was bound again over it in that same run.
 */
async function seenBy(provider: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    expect(tries, `no fresh thread bound to ${provider}`).toBeLessThan(40);
    const id = `fresh-${fresh++}`;
    open(id);
    const b = await bound(id, (v) => v.kind === "binding", `${id} bound`);
    if (b.provider === provider) return;
  }
}

it("a resident evicted elsewhere moves a thread only past the hysteresis margin", async () => {
  await residents("gpu-b", ["qwen3:32b"]);
  await seenBy("gpu-a");
  open("h1");
  const first = await bound("h1", (b) => b.kind === "binding", "h1's first binding");
  expect(first).toMatchObject({ provider: "gpu-a", model: "qwen3:14b", revision: 1 });

  // Evicted elsewhere: gpu-b is now better by 8 points. A fresh thread takes gpu-b; h1, bound
  // again in that same run, stays.
  await generate("gpu-b", { model: "qwen3:32b", keep_alive: 0 });
  await residents("gpu-b", []);
  await seenBy("gpu-b");
  expect(reader.get("h1", "mulling")).toMatchObject({ provider: "gpu-a", revision: 1 });

  // Past the margin: gpu-a now holds the 32b, and gpu-b is better by 27.
  await generate("gpu-a", { model: "qwen3:32b" });
  const moved = await bound("h1", (b) => b.provider === "gpu-b", "h1 moved past the margin");
  expect(moved).toMatchObject({
    revision: 2,
    reason: "rebound from qwen3:14b on gpu-a to qwen3:14b on gpu-b",
  });
});
