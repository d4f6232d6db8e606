// The file source and sink for real: a temp directory of manifests (the crew and prod
// examples), the reconcile loop, binding files on disk, edits picked up by fs.watch and by the
// periodic rescan.
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bind, toDryRun } from "../../src/binding/index.js";
import { loadManifests, toSnapshot } from "../../src/operator/manifests/index.js";
import { type Reconciler, startReconciler } from "../../src/operator/reconcile/index.js";
import {
  type AgentBindingFile,
  type BindingsFile,
  createFileBinding,
  type FileBindingOptions,
  type ProviderInfo,
  readBindingFile,
} from "../../src/operator/sources/index.js";
import { EXAMPLES, recordingLogger, sleep, waitFor } from "./helpers.js";

const NS = "crew-homelab";

describe("file source and sink", () => {
  let dir: string;
  let manifests: string;
  let out: string;
  let reconciler: Reconciler | undefined;
  const log = recordingLogger();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "kubemoot-operator-"));
    manifests = join(dir, "manifests");
    out = join(dir, "out");
    await cp(join(EXAMPLES, "crew"), join(manifests, "crew"), { recursive: true });
    await cp(join(EXAMPLES, "prod"), join(manifests, "prod"), { recursive: true });
    log.lines.length = 0;
  });

  afterEach(async () => {
    await reconciler?.stop();
    reconciler = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function start(
    o: Partial<FileBindingOptions> & { retryMs?: number; onProviders?: (p: ProviderInfo[]) => void } = {},
  ) {
    const { retryMs, onProviders, ...fileOpts } = o;
    const { source, sink } = createFileBinding({
      manifests: [manifests],
      outDir: out,
      logger: log,
      debounceMs: 20,
      ...fileOpts,
    });
    reconciler = await startReconciler({
      source,
      sink,
      logger: log,
      debounceMs: 10,
      ...(retryMs !== undefined ? { retryMs } : {}),
      ...(onProviders ? { onProviders } : {}),
    });
    return { reconciler, source, sink };
  }

  const synth = () => readBindingFile(out, NS, "synthesizer");

  it("writes one binding file per agent with the binder's env, and bindings.json", async () => {
    await start();
    const expected = bind(toSnapshot(await loadManifests([manifests])), { now: new Date() });
    const dry = toDryRun(expected);
    const files = (await readdir(join(out, "bindings", NS))).sort();
    expect(files).toEqual([
      "capacity-analyst.json",
      "kubectl-agent.json",
      "prometheus-agent.json",
      "synthesizer.json",
    ]);
    for (const a of expected.agents) {
      const f = (await readBindingFile(out, a.namespace, a.name))!;
      expect(f.env).toEqual(a.env);
      expect(f.candidates).toEqual(dry.agents[a.key]!.candidates);
      expect(f.mulling).toEqual(dry.agents[a.key]!.mulling);
      expect(f.triage).toEqual(dry.agents[a.key]!.triage);
      expect(f.scheduling).toEqual(a.status.scheduling);
    }
    // Hand-checked: the prod coordinator mulls on qwen3:32b on the 5090, triages on the 4090.
    const s = (await synth())!;
    expect(s).toMatchObject({
      agent: `${NS}/synthesizer`,
      crewSchedulingPolicy: "homelab-default",
      scheduling: {
        model: "qwen3:32b",
        provider: "ollama-a",
        triage: { model: "qwen3:8b", provider: "ollama-b" },
      },
      unschedulable: [],
    });
    expect(s.env.KUBEMOOT_MODEL_MODEL).toBe("qwen3:32b");
    expect(s.env.KUBEMOOT_MODEL_CANDIDATES_MULLING).toBe(
      '[{"model":"qwen3:32b","score":70},{"model":"qwen3:14b","score":60},{"model":"qwen3:8b","score":30}]',
    );
    expect(s.conditions).toEqual([expect.objectContaining({ type: "Scheduled", status: "True" })]);
    const all = JSON.parse(await readFile(join(out, "bindings.json"), "utf8")) as BindingsFile;
    expect(Object.keys(all.agents)).toHaveLength(4);
    expect(all.agents[`${NS}/synthesizer`]).toEqual(s);
    expect(all.policies[`${NS}/homelab-default`]).toMatchObject({ agents: 4, unschedulableAgents: 0 });
    expect(all.events).toEqual([]);
  });

  it("writes only what changed, atomically (no temporary files left)", async () => {
    const { reconciler: r } = await start();
    const before = (await stat(join(out, "bindings", NS, "synthesizer.json"))).mtimeMs;
    await sleep(20);
    const again = await r.reconcileNow("test");
    expect(again.report.writes).toBe(0);
    expect(again.report.skipped).toBe(5);
    expect((await stat(join(out, "bindings", NS, "synthesizer.json"))).mtimeMs).toBe(before);
    expect((await readdir(join(out, "bindings", NS))).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("follows edits through fs.watch: a Model made not ready, then deleted, an agent removed", async () => {
    await start({ rescanMs: 0 }); // no periodic rescan: only the (recursive) watcher sees edits
    const models = join(manifests, "prod", "models.yaml");
    const text = await readFile(models, "utf8");
    // The 32b's `status: ready: true` is the first status block of the file.
    await writeFile(models, text.replace("status:\n  ready: true", "status:\n  ready: false"));
    await waitFor(async () => (await synth())?.scheduling.model === "qwen3:14b", "the rebind off the 32b");
    expect((await synth())!.env.KUBEMOOT_MODEL_CANDIDATES_MULLING).toBe(
      '[{"model":"qwen3:14b","score":60},{"model":"qwen3:8b","score":30}]',
    );

    // Ready again: the 32b (185) beats the bound 14b (165) by only 20 ≤ 25 points, so
    // hysteresis keeps the 14b (the reconciler fed its last status back); candidates list the
    // bound model first.
    await writeFile(models, text);
    await waitFor(
      async () => (await synth())?.env.KUBEMOOT_MODEL_CANDIDATES_MULLING?.includes("qwen3:32b"),
      "the 32b back among the candidates",
    );
    expect((await synth())!.scheduling.model).toBe("qwen3:14b");
    expect((await synth())!.env.KUBEMOOT_MODEL_CANDIDATES_MULLING).toBe(
      '[{"model":"qwen3:14b","score":60},{"model":"qwen3:32b","score":70},{"model":"qwen3:8b","score":30}]',
    );

    // Delete the 32b Model's document.
    const [first, ...rest] = text.split("\n---\n");
    expect(first).toContain("name: qwen3-32b");
    await writeFile(models, rest.join("\n---\n"));
    await waitFor(
      async () => (await synth())?.env.KUBEMOOT_MODEL_CANDIDATES_MULLING?.includes("qwen3:32b") === false,
      "the 32b gone from the candidates",
    );

    // Remove an agent: its binding file goes.
    const agents = join(manifests, "crew", "agents.yaml");
    const docs = (await readFile(agents, "utf8")).split("\n---\n");
    await writeFile(agents, docs.filter((d) => !d.includes("name: capacity-analyst")).join("\n---\n"));
    await waitFor(
      async () => !(await readdir(join(out, "bindings", NS))).includes("capacity-analyst.json"),
      "the removed agent's file to go",
    );
    const all = JSON.parse(await readFile(join(out, "bindings.json"), "utf8")) as BindingsFile;
    expect(Object.keys(all.agents)).toHaveLength(3);
  });

  it("logs an invalid manifest with file and field, skips it, and binds the rest", async () => {
    await writeFile(
      join(manifests, "broken.yaml"),
      [
        "apiVersion: kubemoot.ai/v1alpha1",
        "kind: Model",
        "metadata:",
        "  name: broken",
        "  namespace: kubemoot",
        "spec:",
        "  model: x:1",
        "  providerRef: ollama-a",
        "  vramMib: lots",
      ].join("\n"),
    );
    const { reconciler: r, source } = await start();
    expect(r.lastResult!.unschedulableAgents).toBe(0);
    expect((await synth())!.scheduling.model).toBe("qwen3:32b");
    const warn = log.lines.find((l) => l.level === "warn" && l.msg.startsWith("invalid manifest skipped"));
    expect(warn?.obj).toMatchObject({ file: join(manifests, "broken.yaml"), field: "spec.vramMib" });
    expect(source.issues()).toHaveLength(1);

    // Added while running: logged too, and the others still bind.
    await writeFile(
      join(manifests, "broken2.yaml"),
      "apiVersion: kubemoot.ai/v1alpha1\nkind: Agent\nmetadata: {}\n",
    );
    await waitFor(() => source.issues().length === 2, "the second invalid manifest");
    expect(log.lines.filter((l) => l.msg.startsWith("invalid manifest skipped"))).toHaveLength(2);
    expect((await r.reconcileNow()).unschedulableAgents).toBe(0);
  });

  it("retries an unschedulable crew after the retry interval (rescanning first)", async () => {
    // No watching, no periodic rescan: only the unschedulable retry can notice the fix.
    const { reconciler: r, source } = await start({ watch: false, rescanMs: 0, retryMs: 150 });
    const providers = join(manifests, "prod", "providers.yaml");
    const text = await readFile(providers, "utf8");
    await writeFile(providers, text.replaceAll("ready: true", "ready: false"));
    await source.resync();
    const failing = await r.reconcileNow("providers down");
    expect(failing.unschedulableAgents).toBe(4);
    expect(failing.retryInMs).toBe(150);
    const s = (await synth())!;
    expect(s.unschedulable.map((u) => u.phase)).toEqual(["mulling", "triage"]);
    expect(s.scheduling.lastUnschedulable).toMatchObject({
      phase: "mulling",
      reason: expect.stringContaining("provider not ready"),
      crewSchedulingPolicy: "homelab-default",
    });
    expect(s.env.KUBEMOOT_MODEL_MODEL).toBeUndefined();
    const events = (JSON.parse(await readFile(join(out, "bindings.json"), "utf8")) as BindingsFile).events;
    expect(events.filter((e) => e.reason === "FailedScheduling")).toHaveLength(8);

    // Retries keep running (and write nothing while nothing changes: observedAt is kept).
    const runs = r.lastResult!.run;
    await waitFor(() => r.lastResult!.run >= runs + 2, "two retries", 3_000);
    expect(r.lastResult!.report.writes).toBe(0);
    expect(r.lastResult!.reasons).toEqual(["unschedulable retry"]);

    // Fix the file silently (no watcher): the next retry rescans and binds.
    const scans = source.scanCount;
    await writeFile(providers, text);
    await waitFor(async () => (await synth())?.scheduling.model === "qwen3:32b", "the retry to bind");
    expect(source.scanCount).toBeGreaterThan(scans);
    const ok = (await synth())!;
    expect(ok.conditions).toEqual([expect.objectContaining({ type: "Scheduled", status: "True" })]);
    // No more retries once everything is bound.
    await r.idle();
    expect(r.lastResult!.retryInMs).toBeUndefined();
    const settled = r.lastResult!.run;
    await sleep(400);
    expect(r.lastResult!.run).toBe(settled);
  });

  it("heals missed events with the periodic rescan", async () => {
    const { source } = await start({ watch: false, rescanMs: 60 });
    const models = join(manifests, "prod", "models.yaml");
    const text = await readFile(models, "utf8");
    await writeFile(models, text.replace("status:\n  ready: true", "status:\n  ready: false"));
    await waitFor(async () => (await synth())?.scheduling.model === "qwen3:14b", "the rescan to notice");
    expect(source.scanCount).toBeGreaterThan(1);
  });

  it("provider list for the publisher, and provider states overlaid on the bind", async () => {
    const seen: ProviderInfo[][] = [];
    const { reconciler: r } = await start({ onProviders: (p) => seen.push(p) });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual([
      {
        name: "ollama-a",
        namespace: "kubemoot",
        type: "ollama",
        engine: "ollama",
        endpoint: "http://ollama-a.kubemoot.svc:11434",
        weight: 100,
        maxParallel: 2,
        contextLength: 8192,
        vramTotalMiB: 32605,
        labels: { gpu: "rtx-5090" },
      },
      {
        name: "ollama-b",
        namespace: "kubemoot",
        type: "ollama",
        engine: "ollama",
        endpoint: "http://ollama-b.kubemoot.svc:11434",
        weight: 25,
        maxParallel: 2,
        contextLength: 8192,
        vramTotalMiB: 24563,
        labels: { gpu: "rtx-4090" },
      },
    ]);
    expect(r.providers()).toEqual(seen[0]);

    r.setProviderStates([
      {
        name: "ollama-a",
        endpoint: "http://ollama-a.kubemoot.svc:11434",
        maxParallel: 2,
        activeCount: 0,
        queueDepth: 0,
        loadedModels: [],
        ready: false,
        lastProbedAt: "2026-05-15T15:30:00Z",
        totalVramMiB: 32605,
        loadedModelFootprintsMiB: {},
        availableModelFootprintsMiB: {},
        contextLength: 8192,
        loadedModelContextLengths: {},
      },
    ]);
    await waitFor(async () => (await synth())?.scheduling.provider === "ollama-b", "everything on ollama-b");

    // A provider's weight edited in its manifest: the publisher hears of the new list.
    const providers = join(manifests, "prod", "providers.yaml");
    await writeFile(providers, (await readFile(providers, "utf8")).replace("weight: 25", "weight: 30"));
    await waitFor(() => seen.length === 2, "the new provider list");
    expect(seen[1]!.find((p) => p.name === "ollama-b")!.weight).toBe(30);
  });

  it("restores statuses on restart: nothing is rewritten, conditions keep their transition time", async () => {
    const first = await start();
    const before = (await synth())!;
    await first.reconciler.stop();
    reconciler = undefined;
    await sleep(20);
    const second = await start();
    expect(second.reconciler.lastResult!.report.writes).toBe(0);
    const after = (await synth()) as AgentBindingFile;
    expect(after.conditions[0]!.lastTransitionTime).toBe(before.conditions[0]!.lastTransitionTime);
  });

  it("never reads its own output as manifests, even inside the manifests directory", async () => {
    out = join(manifests, "out");
    const { source, reconciler: r } = await start();
    await sleep(100);
    await r.idle();
    expect(source.issues()).toEqual([]);
    expect((await r.reconcileNow()).report.writes).toBe(0);
  });
});
