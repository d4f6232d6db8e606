import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TopologySourceArm } from "./arm.js";
import { type SnapshotVerdict, TopologySourceTracker } from "./tracker.js";

// Test double for the topology model's validateSnapshot: accepts a document with the right
// apiVersion and a non-empty revision, and hands back its nodes map.
type Nodes = Record<string, Record<string, string>>;
function fakeValidator(doc: unknown): SnapshotVerdict<Nodes> {
  const d = doc as { apiVersion?: unknown; revision?: unknown; nodes?: unknown } | null;
  if (d?.apiVersion !== "topology.kubemoot.ai/v1alpha1") {
    return { ok: false, reason: "WrongApiVersion", message: `apiVersion ${String(d?.apiVersion)}` };
  }
  if (typeof d.revision !== "string" || d.revision === "") {
    return { ok: false, reason: "BlankRevision", message: "revision is blank" };
  }
  return { ok: true, revision: d.revision, nodes: (d.nodes ?? {}) as Nodes };
}

const MAX_STALENESS_MS = 60_000;
const configMapArm: TopologySourceArm = {
  kind: "configMap",
  configMapRef: { namespace: "infra", name: "racks" },
  key: "snapshot.yaml",
  maxStalenessMs: MAX_STALENESS_MS,
};

const T0 = Date.parse("2026-11-30T12:00:00Z");
const at = (ms: number) => new Date(T0 + ms);

function doc(revision: string, rack = "r1"): string {
  return JSON.stringify({
    apiVersion: "topology.kubemoot.ai/v1alpha1",
    revision,
    nodes: { "gpu-1": { "topology.kubemoot.ai/rack": rack } },
  });
}

function tracker(extra: Partial<ConstructorParameters<typeof TopologySourceTracker<Nodes>>[0]> = {}) {
  return new TopologySourceTracker<Nodes>({
    name: "racks",
    arm: configMapArm,
    validate: fakeValidator,
    selectedNodes: () => 3,
    ...extra,
  });
}

describe("TopologySourceTracker", () => {
  it("is Pending and not Ready before the first read", () => {
    expect(tracker().status(at(0))).toEqual({
      ready: false,
      valid: false,
      reason: "Pending",
      message: "no snapshot read yet",
      selectedNodes: 3,
    });
  });

  it("accepts a valid snapshot: Ready, valid, revision and nodes in force", () => {
    const t = tracker();
    expect(t.recordDocument(doc("rev-1"), at(0)).ok).toBe(true);
    expect(t.status(at(1000))).toEqual({
      ready: true,
      valid: true,
      reason: "Accepted",
      message: "revision rev-1 accepted",
      lastSuccessfulRevision: "rev-1",
      lastSuccessfulTime: "2026-11-30T12:00:00.000Z",
      selectedNodes: 3,
    });
    expect(t.snapshot(at(1000))).toEqual({
      revision: "rev-1",
      nodes: { "gpu-1": { "topology.kubemoot.ai/rack": "r1" } },
      acceptedAt: T0,
    });
  });

  it("reads YAML as well as JSON", () => {
    const t = tracker();
    const yaml = "apiVersion: topology.kubemoot.ai/v1alpha1\nrevision: y1\nnodes:\n  gpu-1: {a: b}\n";
    expect(t.recordDocument(yaml, at(0))).toMatchObject({ ok: true, revision: "y1" });
  });

  it("a rejected snapshot never replaces the accepted one", () => {
    const t = tracker();
    t.recordDocument(doc("rev-1", "r1"), at(0));
    const v = t.recordDocument(JSON.stringify({ apiVersion: "v0", revision: "rev-2" }), at(10_000));
    expect(v).toEqual({ ok: false, reason: "WrongApiVersion", message: "apiVersion v0" });
    const s = t.status(at(10_000));
    expect(s).toMatchObject({
      ready: true,
      valid: false,
      reason: "InvalidSnapshot",
      lastSuccessfulRevision: "rev-1",
    });
    expect(s.message).toContain("WrongApiVersion: apiVersion v0");
    expect(s.message).toContain("revision rev-1 stays in force until 2026-11-30T12:01:00.000Z");
    expect(t.snapshot(at(10_000))?.nodes["gpu-1"]).toEqual({ "topology.kubemoot.ai/rack": "r1" });
  });

  it("an unparsable document is rejected whole; a throwing validator too", () => {
    const t = tracker();
    expect(t.recordDocument("{ nodes: [", at(0))).toMatchObject({ ok: false, reason: "UnparsableDocument" });
    expect(t.recordDocument("  \n", at(0))).toMatchObject({ ok: false, reason: "UnparsableDocument" });
    expect(t.status(at(0))).toMatchObject({ ready: false, valid: false, reason: "InvalidSnapshot" });
    const throwing = tracker({
      validate: () => {
        throw new Error("boom");
      },
    });
    expect(throwing.recordDocument(doc("x"), at(0))).toEqual({
      ok: false,
      reason: "ValidatorError",
      message: "boom",
    });
    expect(throwing.snapshot(at(0))).toBeUndefined();
  });

  it("a read failure keeps the accepted snapshot (and the last validity) until maxStaleness", () => {
    const t = tracker();
    t.recordReadFailure("ConfigMap infra/racks not found", at(0));
    expect(t.status(at(0))).toMatchObject({ ready: false, valid: false, reason: "ReadFailed" });
    t.recordDocument(doc("rev-1"), at(5000));
    t.recordReadFailure("ConfigMap infra/racks not found", at(20_000));
    const s = t.status(at(20_000));
    expect(s).toMatchObject({
      ready: true,
      valid: true,
      reason: "ReadFailed",
      lastSuccessfulRevision: "rev-1",
    });
    expect(s.message).toBe(
      "read failed: ConfigMap infra/racks not found; revision rev-1 stays in force until 2026-11-30T12:01:05.000Z",
    );
  });

  it("goes Stale exactly at maxStaleness after the last accepted read, not a millisecond before", () => {
    const t = tracker();
    t.recordDocument(doc("rev-1"), at(0));
    t.recordReadFailure("timeout", at(30_000));
    // A rejected snapshot does not refresh freshness.
    t.recordDocument(doc(""), at(45_000));
    expect(t.status(at(MAX_STALENESS_MS - 1)).ready).toBe(true);
    expect(t.snapshot(at(MAX_STALENESS_MS - 1))?.revision).toBe("rev-1");
    const stale = t.status(at(MAX_STALENESS_MS));
    expect(stale).toMatchObject({
      ready: false,
      valid: false,
      reason: "Stale",
      lastSuccessfulRevision: "rev-1",
    });
    expect(stale.message).toBe(
      "revision rev-1 is out of force: no snapshot accepted within maxStaleness 1m (latest: BlankRevision: revision is blank)",
    );
    expect(t.snapshot(at(MAX_STALENESS_MS))).toBeUndefined();
    expect(t.staleAt()).toBe(T0 + MAX_STALENESS_MS);
  });

  it("an accepted snapshot with no later read also goes stale", () => {
    const t = tracker();
    t.recordDocument(doc("rev-1"), at(0));
    expect(t.status(at(MAX_STALENESS_MS)).reason).toBe("Stale");
    expect(t.status(at(MAX_STALENESS_MS)).message).not.toContain("latest");
  });

  it("recovers on the next accepted snapshot, with a fresh staleness window", () => {
    const t = tracker();
    t.recordDocument(doc("rev-1"), at(0));
    t.recordReadFailure("refused", at(70_000));
    expect(t.status(at(70_000)).ready).toBe(false);
    t.recordDocument(doc("rev-2", "r9"), at(80_000));
    expect(t.status(at(80_000))).toMatchObject({ ready: true, valid: true, reason: "Accepted" });
    expect(t.status(at(80_000 + MAX_STALENESS_MS - 1)).lastSuccessfulRevision).toBe("rev-2");
    expect(t.status(at(80_000 + MAX_STALENESS_MS - 1)).ready).toBe(true);
    expect(t.status(at(80_000 + MAX_STALENESS_MS)).ready).toBe(false);
    expect(t.snapshot(at(80_000))?.nodes["gpu-1"]).toEqual({ "topology.kubemoot.ai/rack": "r9" });
  });

  it("poll reads the ConfigMap arm through the injected getter", async () => {
    const data: Record<string, string> = {};
    let exists = false;
    const t = tracker({
      deps: {
        getConfigMap: (ns, name) => (exists && ns === "infra" && name === "racks" ? { data } : undefined),
      },
    });
    expect(await t.poll(at(0))).toMatchObject({
      ready: false,
      reason: "ReadFailed",
      message: "read failed: ConfigMap infra/racks not found",
    });
    exists = true;
    expect(await t.poll(at(1000))).toMatchObject({
      reason: "ReadFailed",
      message: 'read failed: ConfigMap infra/racks has no key "snapshot.yaml"',
    });
    data["snapshot.yaml"] = doc("cm-1");
    expect(await t.poll(at(2000))).toMatchObject({
      ready: true,
      reason: "Accepted",
      lastSuccessfulRevision: "cm-1",
    });
  });

  it("poll joins a read in flight instead of starting a second one", async () => {
    let reads = 0;
    let release: (text: string) => void = () => undefined;
    const t = tracker({
      read: () => {
        reads += 1;
        return new Promise<string>((resolve) => {
          release = resolve;
        });
      },
    });
    const a = t.poll(at(0));
    const b = t.poll(at(10));
    expect(reads).toBe(1);
    release(doc("rev-1"));
    expect(await a).toBe(await b);
    expect((await a).lastSuccessfulRevision).toBe("rev-1");
    const c = t.poll(at(20));
    expect(reads).toBe(2);
    release(doc("rev-2"));
    expect((await c).lastSuccessfulRevision).toBe("rev-2");
  });

  it("a read cancelled by its owner is not recorded as a failure", async () => {
    const abort = new AbortController();
    const t = tracker({
      read: async (signal) => {
        abort.abort();
        throw signal?.reason ?? new Error("cancelled");
      },
    });
    expect((await t.poll(at(0), abort.signal)).reason).toBe("Pending");
  });

  it("a nodeLabels source reads nothing and follows the injected tree check", async () => {
    let reads = 0;
    let broken = false;
    const t = new TopologySourceTracker<Nodes>({
      name: "labels",
      arm: { kind: "nodeLabels" },
      validate: fakeValidator,
      selectedNodes: () => 7,
      read: async () => {
        reads += 1;
        return "";
      },
      checkNodeLabels: () =>
        broken ? { ok: false, reason: "InvalidHierarchy", message: "rack r1 under two zones" } : { ok: true },
    });
    expect(t.maxStalenessMs).toBeUndefined();
    expect(t.staleAt()).toBeUndefined();
    broken = true;
    expect(t.status(at(0))).toEqual({
      ready: false,
      valid: false,
      reason: "InvalidHierarchy",
      message: "rack r1 under two zones",
      selectedNodes: 7,
    });
    broken = false;
    expect(t.status(at(0))).toMatchObject({ ready: true, valid: true, reason: "Accepted", selectedNodes: 7 });
    // Nothing to poll: even a given reader is never called.
    expect(await t.poll(at(0))).toMatchObject({ ready: true, reason: "Accepted" });
    expect(reads).toBe(0);
  });

  it("property: Ready at t exactly when the latest accepted read is younger than maxStaleness", () => {
    type Ev = { dt: number; kind: "ok" | "bad" | "fail" };
    const ev = fc.record({
      dt: fc.integer({ min: 0, max: 40_000 }),
      kind: fc.constantFrom<Ev["kind"]>("ok", "bad", "fail"),
    });
    fc.assert(
      fc.property(fc.array(ev, { maxLength: 30 }), fc.integer({ min: 0, max: 90_000 }), (events, probe) => {
        const t = tracker();
        let now = 0;
        let lastOk: { at: number; rev: string } | undefined;
        events.forEach((e, i) => {
          now += e.dt;
          if (e.kind === "ok") {
            t.recordDocument(doc(`rev-${i}`), at(now));
            lastOk = { at: now, rev: `rev-${i}` };
          } else if (e.kind === "bad") t.recordDocument(doc(""), at(now));
          else t.recordReadFailure("down", at(now));
        });
        const s = t.status(at(now + probe));
        const fresh = lastOk !== undefined && now + probe - lastOk.at < MAX_STALENESS_MS;
        expect(s.ready).toBe(fresh);
        expect(s.lastSuccessfulRevision).toBe(lastOk?.rev);
        expect(t.snapshot(at(now + probe))?.revision).toBe(fresh ? lastOk?.rev : undefined);
      }),
    );
  });
});
