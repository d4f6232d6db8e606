import { afterEach, describe, expect, it, vi } from "vitest";
import type { TopologySourceArm } from "./arm.js";
import { pollIntervalFor, startTopologySourcePoller, type TopologySourcePoller } from "./poller.js";
import { type SnapshotVerdict, type TopologySourceStatus, TopologySourceTracker } from "./tracker.js";

// Test double for the topology model's validator: any document with a revision is accepted.
function acceptingValidator(doc: unknown): SnapshotVerdict<null> {
  const revision = (doc as { revision?: unknown } | null)?.revision;
  return typeof revision === "string" && revision !== ""
    ? { ok: true, revision, nodes: null }
    : { ok: false, reason: "BlankRevision", message: "no revision" };
}

const webhookArm = (pollIntervalMs: number, maxStalenessMs = 60_000): TopologySourceArm => ({
  kind: "webhook",
  url: "https://inventory.test/topology",
  pollIntervalMs,
  timeoutMs: pollIntervalMs,
  maxStalenessMs,
  credential: { bearerTokenSecretRef: { namespace: "infra", name: "tok", key: "token" } },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits for a condition (the machine is shared, so timings are only lower bounds). */
async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(5);
  }
}
let poller: TopologySourcePoller | undefined;
afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});

describe("startTopologySourcePoller", () => {
  it("polls at once, then every interval, reporting each status", async () => {
    let reads = 0;
    const statuses: TopologySourceStatus[] = [];
    const reportedAt: number[] = [];
    const tracker = new TopologySourceTracker({
      name: "inv",
      arm: webhookArm(50),
      validate: acceptingValidator,
      selectedNodes: () => 1,
      read: async () => JSON.stringify({ revision: `r${++reads}` }),
    });
    poller = startTopologySourcePoller({
      tracker,
      onStatus: (s) => {
        statuses.push(s);
        reportedAt.push(Date.now());
      },
    });
    // The first read starts at once, without waiting for an interval.
    expect(reads).toBe(1);
    await waitFor(() => statuses.length >= 3);
    // The next ones wait an interval after the previous one (timers may fire a millisecond
    // early, hence the slack).
    expect(reportedAt[1]! - reportedAt[0]!).toBeGreaterThanOrEqual(48);
    expect(reportedAt[2]! - reportedAt[1]!).toBeGreaterThanOrEqual(48);
    expect(statuses.map((x) => x.lastSuccessfulRevision).slice(0, 3)).toEqual(["r1", "r2", "r3"]);
    expect(statuses[0]).toMatchObject({ ready: true, reason: "Accepted" });
  });

  it("never overlaps two polls of one source, even when a read outlasts the interval", async () => {
    let active = 0;
    let maxActive = 0;
    let reads = 0;
    const tracker = new TopologySourceTracker({
      name: "slow",
      arm: webhookArm(10),
      validate: acceptingValidator,
      selectedNodes: () => 0,
      read: async () => {
        active += 1;
        reads += 1;
        maxActive = Math.max(maxActive, active);
        await sleep(35);
        active -= 1;
        return JSON.stringify({ revision: "r" });
      },
    });
    poller = startTopologySourcePoller({ tracker });
    const extra = [poller.pollNow(), poller.pollNow()];
    await Promise.all(extra);
    await waitFor(() => reads >= 4);
    expect(maxActive).toBe(1);
  });

  it("stop cancels the read in flight, waits for it, and no poll runs afterwards", async () => {
    let reads = 0;
    let sawAbort = false;
    const tracker = new TopologySourceTracker({
      name: "hung",
      arm: webhookArm(20),
      validate: acceptingValidator,
      selectedNodes: () => 0,
      read: (signal) => {
        reads += 1;
        return new Promise<string>((_, reject) => {
          signal?.addEventListener("abort", () => {
            sawAbort = true;
            reject(new Error("aborted"));
          });
        });
      },
    });
    poller = startTopologySourcePoller({ tracker });
    await sleep(5);
    await poller.stop();
    expect(sawAbort).toBe(true);
    await sleep(60);
    expect(reads).toBe(1);
    // The cancelled read is not counted against the source.
    expect(tracker.status(new Date()).reason).toBe("Pending");
    await poller.pollNow();
    expect(reads).toBe(1);
  });

  it("reports Stale when the snapshot goes out of force between two polls", async () => {
    let reads = 0;
    const statuses: TopologySourceStatus[] = [];
    const tracker = new TopologySourceTracker({
      name: "flaky",
      arm: webhookArm(10_000, 40),
      validate: acceptingValidator,
      selectedNodes: () => 0,
      read: async () => {
        reads += 1;
        return JSON.stringify({ revision: "only" });
      },
    });
    poller = startTopologySourcePoller({ tracker, onStatus: (s) => statuses.push(s) });
    await waitFor(() => statuses.length >= 2);
    expect(reads).toBe(1);
    expect(statuses.map((s) => s.reason)).toEqual(["Accepted", "Stale"]);
  });

  it("a nodeLabels source is not polled: one status, pollNow re-reports", async () => {
    const statuses: TopologySourceStatus[] = [];
    const tracker = new TopologySourceTracker({
      name: "labels",
      arm: { kind: "nodeLabels" },
      validate: acceptingValidator,
      selectedNodes: () => 4,
    });
    poller = startTopologySourcePoller({ tracker, onStatus: (s) => statuses.push(s) });
    await poller.pollNow();
    expect(statuses).toHaveLength(2);
    expect(statuses[0]).toMatchObject({ ready: true, selectedNodes: 4 });
  });

  it("intervals: the webhook's pollInterval; a ConfigMap re-checked at most every 30s", () => {
    expect(pollIntervalFor({ kind: "nodeLabels" })).toBeUndefined();
    expect(pollIntervalFor(webhookArm(45_000))).toBe(45_000);
    const cm = (maxStalenessMs: number): TopologySourceArm => ({
      kind: "configMap",
      configMapRef: { namespace: "a", name: "b" },
      key: "k",
      maxStalenessMs,
    });
    expect(pollIntervalFor(cm(3_600_000))).toBe(30_000);
    expect(pollIntervalFor(cm(20_000))).toBe(10_000);
    expect(pollIntervalFor(cm(500))).toBe(1000);
  });

  it("its timers are unref'd, so a poller never holds the process open", async () => {
    const timers: NodeJS.Timeout[] = [];
    const real = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms?: number) => {
      const t = real(fn, ms);
      timers.push(t);
      return t;
    }) as typeof setTimeout);
    try {
      const tracker = new TopologySourceTracker({
        name: "unref",
        arm: webhookArm(10_000, 5_000),
        validate: acceptingValidator,
        selectedNodes: () => 0,
        read: async () => JSON.stringify({ revision: "r" }),
      });
      poller = startTopologySourcePoller({ tracker });
      await poller.pollNow();
      await new Promise((r) => real(r, 20));
    } finally {
      spy.mockRestore();
    }
    expect(timers.length).toBeGreaterThan(0);
    expect(timers.every((t) => !t.hasRef())).toBe(true);
  });

  it("refuses a non-positive interval", () => {
    const tracker = new TopologySourceTracker({
      name: "x",
      arm: webhookArm(10),
      validate: acceptingValidator,
      selectedNodes: () => 0,
    });
    expect(() => startTopologySourcePoller({ tracker, intervalMs: 0 })).toThrow(RangeError);
  });
});
