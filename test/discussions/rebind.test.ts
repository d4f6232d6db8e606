// Per-discussion bindings over NATS (docs/rules/binding.md §9), end to end: a real nats-server,
// the operator as a process reading a manifests directory, two emulated GPUs of which only one
// is declared at first, and a sidecar process for the crew's coordinator. A thread opened by
// Commit is bound by the operator's discussion binder; a provider that joins mid-discussion
// rebinds it, and the thread's next mulling call uses the new binding with no restart of the
// sidecar; EndThread removes its bindings. The bindings are read here as any NATS client reads
// them: the bucket, through the project's reader of its public format.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import {
  connectNatsKv,
  type DiscussionBinding,
  DiscussionBindings,
  type KvStore,
  openStateStore,
} from "../../src/state/index.js";
import { schedulerClient } from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { repoRoot, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { type StandaloneProcess, startManifestsOperator } from "../helpers/standalone-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const CATALOG = { "qwen3:32b": 20000, "qwen3:14b": 9000, "qwen3:8b": 4863 };
const AGENT = "crew-homelab/synthesizer";
let nats: NatsServer;
let kv: KvStore;
let reader: DiscussionBindings;
let gpuA: EmulatorHandle;
let gpuB: EmulatorHandle;
let dir: string;
let manifests: string;
let operator: StandaloneProcess;
let sidecar: SidecarProcess;
let client: ReturnType<typeof schedulerClient>;

/** The example providers with the emulators' URLs; `withA` false leaves the RTX 5090 out. */
function writeProviders(withA: boolean): void {
  const docs = readFileSync(path.join(repoRoot, "examples/prod/providers.yaml"), "utf8")
    .replace("http://ollama-a.kubemoot.svc:11434", gpuA.url)
    .replace("http://ollama-b.kubemoot.svc:11434", gpuB.url)
    .split(/^---$/m);
  const kept = withA ? docs : docs.filter((d) => !/name: ollama-a/.test(d));
  writeFileSync(path.join(manifests, "providers.yaml"), kept.join("---"));
}

beforeAll(async () => {
  nats = await NatsServer.start();
  kv = await connectNatsKv({ servers: nats.url });
  reader = await DiscussionBindings.open(kv);
  const gpu = (vramMiB: number) =>
    startEmulator({ listen: "127.0.0.1:0", vramMiB, models: CATALOG, contextLength: 8192, timeScale: 0.01 });
  gpuA = await gpu(32605);
  gpuB = await gpu(24563);
  dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-discussions-"));
  manifests = path.join(dir, "manifests");
  mkdirSync(manifests, { recursive: true });
  for (const f of ["crew/namespace.yaml", "crew/agents.yaml", "crew/policy.yaml", "prod/models.yaml"])
    copyFileSync(path.join(repoRoot, "examples", f), path.join(manifests, f.replace("/", "-")));
  writeProviders(false);
  // One probe a second: a dead provider's state goes not ready only after three failed probes
  // (2 s after the first), while its threads must move at the first.
  operator = await startManifestsOperator({
    manifests,
    outDir: path.join(dir, "out"),
    natsUrl: nats.url,
    probeMs: 1000,
  });
  sidecar = await startSidecarProcess(["--nats", nats.url, "--proxy-listen", ""], {
    KUBEMOOT_NAMESPACE: "crew-homelab",
    KUBEMOOT_AGENT_NAME: "synthesizer",
    // The pod's static list: what a thread without a binding uses.
    KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:8b","score":10}]',
  });
  client = schedulerClient(sidecar.apiAddress);
}, 60_000);

afterAll(async () => {
  client?.close();
  await sidecar?.stop();
  await operator?.stop();
  await reader?.close();
  await kv?.close();
  await gpuA?.close();
  await gpuB?.close();
  await nats?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function bindingWhere(
  thread: string,
  ok: (b: DiscussionBinding) => boolean,
  what: string,
): Promise<DiscussionBinding> {
  await waitUntil(
    () => {
      const b = reader.get(thread, "mulling");
      return b !== undefined && ok(b);
    },
    20_000,
    `${what}\n${operator.output()}`,
  );
  return reader.get(thread, "mulling")!;
}

/** A mulling call of the thread with no candidates of its own, on its best candidate only. */
async function place(thread: string): Promise<{ provider: string; model: string }> {
  const r = await tryPlace(thread);
  expect(r.result, JSON.stringify(r)).toBe("placement");
  return release(r);
}

function tryPlace(thread: string) {
  return client.call("Place", { threadId: thread, phase: "mulling", tolerance: 0, promptChars: 200 });
}

async function release(
  r: Awaited<ReturnType<typeof tryPlace>>,
): Promise<{ provider: string; model: string }> {
  await client.call("Release", {
    ticketId: r.placement.ticketId,
    outcome: "CALL_OUTCOME_SUCCEEDED",
    latencyMs: 5,
  });
  return { provider: r.placement.provider, model: r.placement.model };
}

it("rebinds a thread when a provider joins mid-discussion; its next call uses it, with no restart", async () => {
  const pid = sidecar.proc.pid;
  const committed = await client.call("Commit", {
    threadId: "t1",
    phase: "mulling",
    candidates: [{ model: "qwen3:8b", score: 10 }],
  });
  expect(["planned", "refusal"]).toContain(committed.result);
  const first = await bindingWhere("t1", (b) => b.kind === "binding", "t1's first binding");
  expect(first).toMatchObject({ agent: AGENT, provider: "ollama-b", revision: 1 });
  expect(first.candidates[0]?.model).toBe(first.model);
  // The crew's policy spreads a discussion's phases over providers, ScheduleAnyway: with one
  // provider, triage shares it rather than going unbound.
  expect(reader.get("t1", "triage")).toMatchObject({ kind: "binding", provider: "ollama-b" });
  // The Commit's held plan (made before any binding, on the Commit's own candidates) serves the
  // thread's first call; the calls after it take the thread's binding.
  const planned = await tryPlace("t1");
  expect(planned.placement?.fromPlan, JSON.stringify(planned)).toBe(true);
  expect(planned.placement.bindingRevision).toBe("0");
  expect((await release(planned)).model).toBe("qwen3:8b");
  const second = await tryPlace("t1");
  // The binding's revision is named in the placement and in Attribute.
  expect(second.placement?.bindingRevision, JSON.stringify(second)).toBe("1");
  expect((await client.call("Attribute", { ticketId: second.placement.ticketId })).bindingRevision).toBe("1");
  expect(await release(second)).toEqual({ provider: "ollama-b", model: first.model });

  writeProviders(true);
  const rebound = await bindingWhere(
    "t1",
    (b) => b.provider === "ollama-a",
    "t1 rebound to the joined ollama-a",
  );
  expect(rebound.revision).toBe(2);
  // Two providers: the phases of the one discussion are on different ones.
  expect(reader.get("t1", "triage")).toMatchObject({ kind: "binding", provider: "ollama-b" });
  expect(rebound.reason).toMatch(/^rebound from .* on ollama-b to .* on ollama-a/);
  // The binding and ollama-a's provider state reach the sidecar through two buckets, in either
  // order: until the state arrives, the bound model has nowhere to go here and is refused.
  let next: { provider: string; model: string } | undefined;
  await waitUntil(
    async () => {
      const r = await tryPlace("t1");
      if (r.result === "placement") {
        expect(r.placement.bindingRevision).toBe("2");
        next = await release(r);
      } else expect(r.refusal.reason, JSON.stringify(r)).toBe("REASON_MODEL_TOO_LARGE");
      return next !== undefined;
    },
    10_000,
    "t1's next call placed",
  );
  expect(next).toEqual({ provider: "ollama-a", model: rebound.model });
  expect(sidecar.proc.pid).toBe(pid);
  expect(sidecar.proc.exitCode).toBeNull();
});

it("says why a thread whose id is not a key token gets no binding, and plans it as before", async () => {
  const committed = await client.call("Commit", {
    threadId: "thread:42",
    phase: "mulling",
    candidates: [{ model: "qwen3:8b", score: 10 }],
  });
  expect(["planned", "refusal"]).toContain(committed.result);
  await waitUntil(
    () => /thread id is not a NATS key token/.test(sidecar.output()),
    10_000,
    `the sidecar's warning\n${sidecar.output()}`,
  );
  expect(sidecar.output()).toMatch(/"field":"thread_id"/);
  await client.call("EndThread", { threadId: "thread:42" });
});

it("ends a thread's bindings with EndThread", async () => {
  await client.call("Commit", {
    threadId: "t2",
    phase: "mulling",
    candidates: [{ model: "qwen3:8b", score: 10 }],
  });
  await bindingWhere("t2", (b) => b.kind === "binding", "t2's binding");
  await client.call("EndThread", { threadId: "t2" });
  await waitUntil(
    () => reader.get("t2", "mulling") === undefined && reader.get("t2", "triage") === undefined,
    10_000,
    "t2's bindings removed",
  );
  // A thread with no binding uses the pod's static candidates again.
  expect((await place("t2")).model).toBe("qwen3:8b");
});

it("moves a thread off its provider at the provider's first failed probe; a phase nothing fits refuses its calls", async () => {
  await client.call("Commit", {
    threadId: "t3",
    phase: "mulling",
    candidates: [{ model: "qwen3:8b", score: 10 }],
  });
  const bound = await bindingWhere("t3", (b) => b.provider === "ollama-a", "t3 bound to ollama-a");
  const states = await openStateStore(nats.url);
  try {
    const t0 = performance.now();
    await gpuA.close();
    const moved = await bindingWhere(
      "t3",
      (b) => b.provider !== "ollama-a",
      "t3 moved off the dead ollama-a",
    );
    const seenMs = performance.now() - t0;
    // Before the provider state says not ready (three failed probes, one a second): the binder
    // acted on the first failure, within one probe interval of the death.
    const a = (await states.providers.list()).find((p) => p.name === "ollama-a");
    expect(a?.ready, `ollama-a's published state after ${seenMs.toFixed(0)} ms`).toBe(true);
    console.log(
      `discussions: t3 rebound ${seenMs.toFixed(0)} ms after its provider died (probe interval 1000 ms)`,
    );
    expect(moved).toMatchObject({ kind: "binding", provider: "ollama-b", revision: bound.revision + 1 });

    // With both GPUs gone nothing fits the phase: the thread's calls are refused with the
    // binder's reason, at once, naming the revision; a call with candidates of its own is not.
    await gpuB.close();
    const none = await bindingWhere("t3", (b) => b.kind === "unschedulable", "t3 unschedulable");
    expect(none.reason).toMatch(/provider not ready/);
    const refused = await tryPlace("t3");
    expect(refused.refusal, JSON.stringify(refused)).toMatchObject({
      reason: "REASON_UNSCHEDULABLE",
      bindingRevision: String(none.revision),
    });
    expect(refused.refusal.message).toContain(none.reason);
    const own = await client.call("Place", {
      threadId: "t3",
      phase: "mulling",
      candidates: [{ model: "qwen3:8b", score: 10 }],
      promptChars: 200,
    });
    expect(own.refusal?.reason).not.toBe("REASON_UNSCHEDULABLE");
  } finally {
    await states.close();
  }
});
