// The Kubernetes source and sink, end to end through @kubernetes/client-node, against the
// in-process FAKE API server (./fake-apiserver): no kube-apiserver is available to the tests.
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bind, toDryRun } from "../../src/binding/index.js";
import type { ProviderState } from "../../src/core/shapes.js";
import { createKubernetesBinding, kubeConfigForServer } from "../../src/operator/kube/index.js";
import { loadManifests, loadProviderStateFile, toSnapshot } from "../../src/operator/manifests/index.js";
import { type Reconciler, startReconciler } from "../../src/operator/reconcile/index.js";
import type { ProviderInfo } from "../../src/operator/sources/index.js";
import { FakeApiServer, type Obj } from "./fake-apiserver/index.js";
import { EXAMPLES, exampleObjects, recordingLogger, sleep, waitFor } from "./helpers.js";

const V = "kubemoot.ai/v1alpha1";
const NS = "crew-homelab";
const MERGE = "application/merge-patch+json";

interface Env {
  name: string;
  value?: string;
}

function deployment(
  name: string,
  opts: { labels?: Record<string, string>; annotations?: Record<string, string> },
) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: NS, labels: opts.labels ?? {}, annotations: opts.annotations ?? {} },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            { name: "agent", image: "agent:1", env: [{ name: "FOO", value: "bar" }] },
            { name: "sidecar", image: "kubemoot-scheduler:1" },
          ],
        },
      },
    },
  };
}

function containerEnv(d: Obj | undefined, container: string): Record<string, string> {
  const spec = d?.spec as unknown as { template: { spec: { containers: { name: string; env?: Env[] }[] } } };
  const c = spec.template.spec.containers.find((x) => x.name === container);
  return Object.fromEntries((c?.env ?? []).map((e) => [e.name, e.value ?? ""]));
}

describe("Kubernetes source and sink (against the FAKE API server)", () => {
  let fake: FakeApiServer;
  let reconciler: Reconciler | undefined;
  let providersSeen: ProviderInfo[][];
  const log = recordingLogger();

  beforeEach(async () => {
    fake = await FakeApiServer.start();
    for (const o of await exampleObjects("crew", "prod")) fake.apply(o);
    // The synthesizer's Deployment is found by name; kubectl-agent's by label, and only its
    // `agent` container is managed (annotation). prometheus-agent has no Deployment.
    fake.apply(deployment("synthesizer", {}));
    fake.apply(
      deployment("kubectl-runtime", {
        labels: { "kubemoot.ai/agent": "kubectl-agent" },
        annotations: { "kubemoot.ai/env-containers": "agent" },
      }),
    );
    fake.apply(deployment("unrelated", {}));
    providersSeen = [];
    log.lines.length = 0;
  });

  afterEach(async () => {
    await reconciler?.stop();
    reconciler = undefined;
    await fake.close();
  });

  async function start(extra: { retryMs?: number; errorBackoffMs?: number } = {}) {
    const { source, sink, store } = createKubernetesBinding({
      kubeConfig: kubeConfigForServer(fake.url),
      logger: log,
      backoff: { initialMs: 40, maxMs: 400, jitter: 0 },
      stableMs: 60_000,
    });
    reconciler = await startReconciler({
      source,
      sink,
      logger: log,
      debounceMs: 10,
      retryMs: extra.retryMs ?? 30_000,
      errorBackoffMs: extra.errorBackoffMs ?? 1_000,
      onProviders: (p) => providersSeen.push(p),
    });
    return { reconciler, store };
  }

  const agent = (name: string) => fake.get(V, "Agent", NS, name)!;
  const status = (o: Obj) => o.status as Record<string, unknown> & { scheduling?: Record<string, unknown> };

  it("informers list every CRD and the first bind equals the binder's on the same manifests", async () => {
    const { reconciler: r } = await start();
    const expected = bind(toSnapshot(await loadManifests([`${EXAMPLES}/crew`, `${EXAMPLES}/prod`])), {
      now: new Date(),
    });
    expect(toDryRun(r.lastResult!.bind).agents).toEqual(toDryRun(expected).agents);
    expect(r.lastResult!.bind.agents.map((a) => a.key)).toEqual([
      `${NS}/capacity-analyst`,
      `${NS}/kubectl-agent`,
      `${NS}/prometheus-agent`,
      `${NS}/synthesizer`,
    ]);
    for (const plural of ["models", "modelproviders", "agents", "crewschedulingpolicies", "mootarchetypes"]) {
      expect(fake.requestsTo("GET", `/apis/kubemoot.ai/v1alpha1/${plural}`).some((q) => !q.watch)).toBe(true);
      await waitFor(() => fake.openWatches(plural) === 1, `a watch on ${plural}`);
    }
    expect(fake.requestsTo("GET", "/apis/apps/v1/deployments").length).toBeGreaterThan(0);
    // The provider list for the publisher.
    expect(providersSeen).toHaveLength(1);
    expect(providersSeen[0]!.map((p) => [p.name, p.endpoint, p.weight])).toEqual([
      ["ollama-a", "http://ollama-a.kubemoot.svc:11434", 100],
      ["ollama-b", "http://ollama-b.kubemoot.svc:11434", 25],
    ]);
  });

  it("writes Agent status with a merge patch whose Content-Type is set explicitly", async () => {
    await start();
    const patches = fake.requests.filter((q) => q.method === "PATCH" && q.path.endsWith("/status"));
    expect(patches.length).toBeGreaterThan(0);
    for (const q of patches) {
      expect(q.contentType).toBe(MERGE);
      expect(q.status).toBe(200);
    }
    const synth = status(agent("synthesizer"));
    expect(synth.scheduling).toMatchObject({
      model: "qwen3:32b",
      modelRef: "qwen3-32b",
      provider: "ollama-a",
      endpoint: "http://ollama-a.kubemoot.svc:11434",
      triage: { model: "qwen3:8b", provider: "ollama-b" },
    });
    expect(synth.conditions).toEqual([expect.objectContaining({ type: "Scheduled", status: "True" })]);
    const policy = status(fake.get(V, "CrewSchedulingPolicy", NS, "homelab-default")!);
    expect(policy).toMatchObject({ agents: 4, unschedulableAgents: 0, observedGeneration: 1 });
    // ModelProvider agentCount: every agent mulls on ollama-a and triages on ollama-b.
    const capA = status(fake.get(V, "ModelProvider", "kubemoot", "ollama-a")!).capacity as Record<
      string,
      number
    >;
    expect(capA.agentCount).toBe(4);

    // Without the explicit header, client-node sends json-patch+json and the server refuses.
    const raw = kubeConfigForServer(fake.url).makeApiClient(CustomObjectsApi);
    const err = await raw
      .patchNamespacedCustomObjectStatus({
        group: "kubemoot.ai",
        version: "v1alpha1",
        namespace: NS,
        plural: "agents",
        name: "synthesizer",
        body: { status: { scheduling: { model: "x" } } },
      })
      .catch((e: unknown) => e);
    expect((err as { code?: number }).code).toBe(415);
    expect(fake.requests.at(-1)!.contentType).toBe("application/json-patch+json");
  });

  it("is idempotent: a reconcile that changes nothing writes nothing", async () => {
    const { reconciler: r } = await start();
    await sleep(100); // let the watch events of the first writes arrive
    await r.idle();
    const before = fake.requests.filter((q) => q.method !== "GET").length;
    const again = await r.reconcileNow("test");
    expect(again.report.writes).toBe(0);
    await sleep(50);
    await r.idle();
    expect(fake.requests.filter((q) => q.method !== "GET").length).toBe(before);
  });

  it("patches a Deployment's env only when it changes, keeping other variables", async () => {
    const { reconciler: r } = await start();
    const envPatches = () =>
      fake.requests.filter((q) => q.method === "PATCH" && q.path.includes("/deployments/"));
    expect(envPatches().map((q) => [q.path.split("/").at(-1), q.contentType, q.status])).toEqual([
      ["kubectl-runtime", "application/json-patch+json", 200],
      ["synthesizer", "application/json-patch+json", 200],
    ]);
    const synth = fake.get("apps/v1", "Deployment", NS, "synthesizer");
    expect(containerEnv(synth, "agent")).toEqual({
      FOO: "bar",
      KUBEMOOT_MODEL_MODEL: "qwen3:32b",
      KUBEMOOT_MODEL_ENDPOINT: "http://ollama-a.kubemoot.svc:11434",
      KUBEMOOT_TRIAGE_MODEL_MODEL_ID: "qwen3:8b",
      KUBEMOOT_TRIAGE_MODEL_ENDPOINT: "http://ollama-b.kubemoot.svc:11434",
      KUBEMOOT_MODEL_CANDIDATES_MULLING:
        '[{"model":"qwen3:32b","score":70},{"model":"qwen3:14b","score":60},{"model":"qwen3:8b","score":30}]',
      KUBEMOOT_MODEL_CANDIDATES_TRIAGE:
        '[{"model":"qwen3:8b","score":100},{"model":"qwen3:14b","score":50},{"model":"qwen3:32b","score":0}]',
    });
    expect(containerEnv(synth, "sidecar").KUBEMOOT_MODEL_MODEL).toBe("qwen3:32b");
    const kubectl = fake.get("apps/v1", "Deployment", NS, "kubectl-runtime");
    expect(containerEnv(kubectl, "agent").KUBEMOOT_MODEL_MODEL).toBe("qwen3:14b");
    expect(containerEnv(kubectl, "sidecar")).toEqual({});
    expect(fake.get("apps/v1", "Deployment", NS, "unrelated")!.metadata.generation).toBe(1);

    // Unchanged binding: repeated reconciles (and the Deployments' own watch events) patch nothing.
    await sleep(100);
    await r.reconcileNow("again");
    await r.reconcileNow("and again");
    expect(envPatches()).toHaveLength(2);

    // The 32b Model goes not ready: the synthesizer rebinds, its Deployment is patched once.
    const m = fake.get(V, "Model", "kubemoot", "qwen3-32b")!;
    fake.apply({ ...m, status: { ready: false } });
    await waitFor(
      () =>
        containerEnv(fake.get("apps/v1", "Deployment", NS, "synthesizer"), "agent").KUBEMOOT_MODEL_MODEL ===
        "qwen3:14b",
      "the synthesizer's env to follow the rebind",
    );
    await sleep(100);
    await r.idle();
    const synthPatches = envPatches().filter((q) => q.path.endsWith("/synthesizer"));
    expect(synthPatches).toHaveLength(2);
    expect(containerEnv(fake.get("apps/v1", "Deployment", NS, "synthesizer"), "agent").FOO).toBe("bar");
  });

  it("a relevant change triggers a rebind: deleting the 32b Model moves the coordinator", async () => {
    await start();
    expect(status(agent("synthesizer")).scheduling!.model).toBe("qwen3:32b");
    fake.remove(V, "Model", "kubemoot", "qwen3-32b");
    await waitFor(() => status(agent("synthesizer")).scheduling!.model === "qwen3:14b", "the rebind");
    // The Deployment follows (written after the statuses), and its candidates drop the 32b.
    const env = await waitFor(() => {
      const e = containerEnv(fake.get("apps/v1", "Deployment", NS, "synthesizer"), "agent");
      return e.KUBEMOOT_MODEL_MODEL === "qwen3:14b" ? e : undefined;
    }, "the Deployment's env");
    expect(env.KUBEMOOT_MODEL_CANDIDATES_MULLING).toBe(
      '[{"model":"qwen3:14b","score":60},{"model":"qwen3:8b","score":30}]',
    );
  });

  it("zero match: FailedScheduling Events, Unschedulable conditions, retried after the interval", async () => {
    const { reconciler: r } = await start({ retryMs: 150 });
    const policy = fake.get(V, "CrewSchedulingPolicy", NS, "homelab-default")!;
    const spec = policy.spec as { rules: { phase: string; require: unknown }[] };
    fake.apply({
      ...policy,
      spec: {
        ...spec,
        rules: spec.rules.map((rule) => ({ ...rule, require: { matchLabels: { params: "70B" } } })),
      },
    });
    const events = await waitFor(() => {
      const e = fake.events().filter((x) => x.reason === "FailedScheduling");
      return e.length >= 16 ? e : undefined;
    }, "FailedScheduling events");
    const onPolicy = events.filter(
      (e) => (e.involvedObject as Record<string, string>).kind === "CrewSchedulingPolicy",
    );
    const onAgents = events.filter((e) => (e.involvedObject as Record<string, string>).kind === "Agent");
    expect(onPolicy).toHaveLength(8); // 4 agents × 2 phases
    expect(onAgents).toHaveLength(8);
    expect(onPolicy[0]).toMatchObject({
      type: "Warning",
      involvedObject: { apiVersion: V, name: "homelab-default", namespace: NS },
      metadata: { namespace: NS },
    });
    expect(String(onPolicy[0]!.message)).toContain("no Model matches require selectors {params: 70B}");
    expect(fake.requestsTo("POST", `/api/v1/namespaces/${NS}/events`).every((q) => q.status === 201)).toBe(
      true,
    );

    const synth = await waitFor(() => {
      const s = status(agent("synthesizer"));
      return (s.conditions as { status: string }[] | undefined)?.[0]?.status === "False" ? s : undefined;
    }, "Scheduled=False on the Agent");
    expect(synth.conditions).toEqual([
      expect.objectContaining({ type: "Scheduled", status: "False", reason: "Unschedulable" }),
    ]);
    expect(synth.scheduling!.lastUnschedulable).toMatchObject({
      phase: "mulling",
      reason: "no Model matches require selectors {params: 70B}",
      crewSchedulingPolicy: "homelab-default",
    });
    // Like a pending Pod, the running agent keeps its last model; candidates follow the binder.
    const env = containerEnv(fake.get("apps/v1", "Deployment", NS, "synthesizer"), "agent");
    expect(env.KUBEMOOT_MODEL_MODEL).toBe("qwen3:32b");
    expect(env.KUBEMOOT_MODEL_CANDIDATES_MULLING).toBe("[]");
    const pol = status(fake.get(V, "CrewSchedulingPolicy", NS, "homelab-default")!);
    expect(pol).toMatchObject({ unschedulableAgents: 4, observedGeneration: 2 });

    // Retries run every 150 ms without a change, and write nothing new (no duplicate events).
    await sleep(100);
    const runs = r.lastResult!.run;
    const writes = fake.requests.filter((q) => q.method !== "GET").length;
    await waitFor(() => r.lastResult!.run >= runs + 2, "two retries", 3_000);
    expect(r.lastResult!.reasons).toContain("unschedulable retry");
    expect(fake.requests.filter((q) => q.method !== "GET").length).toBe(writes);

    // Models that match appear: the next reconcile binds the crew again.
    fake.apply({
      apiVersion: V,
      kind: "Model",
      metadata: { name: "llama-70b", namespace: "kubemoot", labels: { params: "70B", latencyClass: "high" } },
      spec: { model: "llama3:70b", providerRef: "ollama-a", vramMib: 30000 },
      status: { ready: true },
    });
    await waitFor(() => status(agent("synthesizer")).scheduling!.model === "llama3:70b", "the rebind on 70b");
    expect(status(agent("synthesizer")).conditions).toEqual([
      expect.objectContaining({ type: "Scheduled", status: "True" }),
    ]);
  });

  it("re-establishes a broken watch with exponential backoff and still sees later changes", async () => {
    const { store } = await start();
    await waitFor(() => fake.openWatches() === 6, "six watches");
    const t0 = Date.now();
    fake.fail({ watch: true, path: "/agents", status: 500, times: 3 });
    expect(fake.breakWatches()).toBe(6);
    await waitFor(() => fake.openWatches("agents") === 1, "the agents watch back", 5_000);
    const attempts = fake.requests.filter((q) => q.watch && q.path.endsWith("/agents") && q.at >= t0);
    expect(attempts.map((q) => q.status)).toEqual([500, 500, 500, 200]);
    const gaps = attempts.slice(1).map((q, i) => q.at - attempts[i]!.at);
    // Backoff 40 ms, doubling: gaps of at least 80, 160 and 320 ms (timers never fire early).
    expect(gaps[0]).toBeGreaterThanOrEqual(75);
    expect(gaps[1]).toBeGreaterThanOrEqual(155);
    expect(gaps[2]).toBeGreaterThanOrEqual(315);
    expect(store.restarts).toBeGreaterThanOrEqual(6 + 3);
    // Resumed from the last resourceVersion: no relist of agents was needed.
    expect(
      attempts.every((q) => q.query.resourceVersion !== undefined && q.query.resourceVersion !== ""),
    ).toBe(true);

    fake.apply({
      apiVersion: V,
      kind: "Agent",
      metadata: { name: "late-agent", namespace: NS, labels: { "kubemoot.ai/crew": "homelab" } },
      spec: { discussRole: "analyst", capabilities: ["analysis"] },
    });
    await waitFor(() => status(agent("late-agent"))?.scheduling?.model, "the new agent bound");
  });

  it("a cleanly closed watch is reopened at once; an expired resourceVersion relists", async () => {
    await start();
    await waitFor(() => fake.openWatches() === 6, "six watches");
    expect(fake.closeWatches()).toBe(6);
    await waitFor(() => fake.openWatches() === 6, "watches reopened", 2_000);
    fake.apply({
      apiVersion: V,
      kind: "Agent",
      metadata: { name: "after-close", namespace: NS, labels: { "kubemoot.ai/crew": "homelab" } },
      spec: { capabilities: [] },
    });
    await waitFor(() => status(agent("after-close"))?.scheduling?.model, "bound after a closed watch");

    // History compacted while disconnected: the resumed watch gets 410 Gone and relists.
    fake.breakWatches();
    fake.remove(V, "Agent", NS, "after-close");
    fake.apply({
      apiVersion: V,
      kind: "Agent",
      metadata: { name: "after-gone", namespace: NS, labels: { "kubemoot.ai/crew": "homelab" } },
      spec: { capabilities: [] },
    });
    fake.compact();
    await waitFor(() => status(agent("after-gone"))?.scheduling?.model, "bound after a relist");
    const relists = fake.requests.filter((q) => !q.watch && q.method === "GET" && q.path.endsWith("/agents"));
    expect(relists.length).toBeGreaterThanOrEqual(2);
  });

  it("provider states: ModelProvider status.capacity is written and the crew rebinds", async () => {
    const { reconciler: r } = await start();
    const states: ProviderState[] = await loadProviderStateFile(`${EXAMPLES}/state/prod-5090-down.json`);
    r.setProviderStates(states);
    await waitFor(
      () => status(agent("synthesizer")).scheduling!.provider === "ollama-b",
      "everything on ollama-b",
    );
    await r.idle();
    const a = status(fake.get(V, "ModelProvider", "kubemoot", "ollama-a")!);
    const b = status(fake.get(V, "ModelProvider", "kubemoot", "ollama-b")!);
    expect(a).toMatchObject({ ready: false, lastProbedAt: "2026-05-15T15:30:00Z" });
    expect(a.capacity).toMatchObject({
      vramTotalMiB: 32605,
      vramUsedMiB: 0,
      loadedModels: [],
      agentCount: 0,
    });
    expect(b).toMatchObject({ ready: true });
    expect(b.capacity).toMatchObject({
      vramTotalMiB: 24563,
      vramUsedMiB: 6144,
      maxParallel: 2,
      contextLength: 8192,
      loadedModels: [{ name: "qwen3:8b", sizeMiB: 6144 }],
      agentCount: 4,
    });
    const providerPatches = fake.requests.filter(
      (q) => q.method === "PATCH" && q.path.includes("/modelproviders/"),
    );
    expect(providerPatches.every((q) => q.contentType === MERGE && q.path.endsWith("/status"))).toBe(true);

    // The same states again with only lastProbedAt a few seconds later: no status write.
    await sleep(50);
    const before = providerPatches.length;
    r.setProviderStates(states.map((s) => ({ ...s, lastProbedAt: "2026-05-15T15:30:05Z" })));
    await sleep(50);
    await r.idle();
    expect(
      fake.requests.filter((q) => q.method === "PATCH" && q.path.includes("/modelproviders/")),
    ).toHaveLength(before);
  });

  it("a failed write is reported and retried with backoff; the other writes still land", async () => {
    fake.fail({ method: "PATCH", path: "/deployments/synthesizer", status: 500, times: 2 });
    const { reconciler: r } = await start({ errorBackoffMs: 30 });
    expect(r.lastResult!.report.failures).toEqual([
      { target: `env Deployment/${NS}/synthesizer`, message: expect.stringContaining("HTTP 500") },
    ]);
    expect(r.lastResult!.retryInMs).toBe(30);
    expect(status(agent("synthesizer")).scheduling!.model).toBe("qwen3:32b");
    await waitFor(
      () => containerEnv(fake.get("apps/v1", "Deployment", NS, "synthesizer"), "agent").KUBEMOOT_MODEL_MODEL,
      "the retried env patch",
    );
    const attempts = fake.requestsTo("PATCH", "/deployments/synthesizer").map((q) => q.status);
    expect(attempts).toEqual([500, 500, 200]);
    expect(log.lines.some((l) => l.level === "warn" && l.msg === "write failed")).toBe(true);
  });

  it("an invalid object is logged and skipped; the rest still binds", async () => {
    fake.apply({
      apiVersion: V,
      kind: "Model",
      metadata: { name: "broken", namespace: "kubemoot", labels: { latencyClass: "warp" } },
      spec: { model: "x:1", providerRef: "ollama-a", vramMib: -3 },
    });
    const { reconciler: r } = await start();
    expect(r.lastResult!.bind.agents.every((x) => x.unschedulable.length === 0)).toBe(true);
    const warn = log.lines.find((l) => l.level === "warn" && l.msg.startsWith("invalid object skipped"));
    expect(warn?.obj).toMatchObject({ kind: "Model", object: "kubemoot/broken", field: expect.any(String) });
  });
});
