// The discussion binder as a driver (docs/rules/binding.md §9), on the in-memory store: threads
// learned from the discussion events, one value per (thread, phase) published, written again only
// when what it says changes (revision + 1) or when a weight change moves the thread past the
// hysteresis margin, removed at close; events that are not ours are skipped.
import { afterEach, describe, expect, it } from "vitest";
import { agent, model, NOW, policy, provider, qwen, snapshot } from "../../../test/binding/fixtures.js";
import type { ClusterSnapshot } from "../../binding/index.js";
import { silentLogger } from "../../log/index.js";
import { DiscussionBindings, encodeDiscussionEvent, MemoryKvStore } from "../../state/index.js";
import { DiscussionBinder } from "./binder.js";

const kv = new MemoryKvStore();
let bindings: DiscussionBindings;
let binder: DiscussionBinder;

afterEach(async () => {
  await binder?.stop();
  await bindings?.close();
});

/** gpu-b's weight decides against gpu-a's 50: the 14B on either, the same model. */
function fleet(weightB: number): ClusterSnapshot {
  return snapshot({
    models: [
      model("qwen3-14b-a", { id: "qwen3:14b", labels: qwen("14B", "medium"), provider: "gpu-a" }),
      model("qwen3-14b-b", { id: "qwen3:14b", labels: qwen("14B", "medium"), provider: "gpu-b" }),
    ],
    providers: [
      provider("gpu-a", { weight: 50, maxParallel: 4 }),
      provider("gpu-b", { weight: weightB, maxParallel: 4 }),
    ],
    agents: [agent("a")],
    policies: [policy("p", {})],
  });
}

async function start(): Promise<void> {
  bindings = await DiscussionBindings.open(kv);
  await bindings.ready;
  binder = new DiscussionBinder({ bus: kv.messages, bindings, logger: silentLogger, now: () => NOW });
  binder.start();
}

function send(kind: "open" | "close", threadId: string, agentRef = "crew/a"): void {
  const m = encodeDiscussionEvent({ kind, threadId, agent: agentRef })!;
  kv.messages.publish(m.subject, m.data);
}

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(ok(), what).toBe(true);
}

describe("the discussion binder", () => {
  it("binds an opened thread's phases, rebinds past the margin only, and removes them at close", async () => {
    await start();
    binder.setSnapshot(fleet(0));
    send("open", "th-1");
    await until(() => bindings.get("th-1", "mulling") !== undefined, "th-1 bound");
    const first = bindings.get("th-1", "mulling")!;
    expect(first).toMatchObject({
      kind: "binding",
      agent: "crew/a",
      provider: "gpu-a",
      model: "qwen3:14b",
      revision: 1,
    });
    expect(first.reason).toBe("bound to qwen3:14b on gpu-a");
    expect(bindings.get("th-1", "triage")?.kind).toBeDefined();

    // gpu-b now better by 25 points: within the margin, nothing is written.
    const revision = bindings.revision;
    binder.setSnapshot(fleet(75));
    await binder.settled();
    expect(bindings.revision).toBe(revision);
    expect(bindings.get("th-1", "mulling")?.provider).toBe("gpu-a");

    // Better by 26: rebound, the revision one up, the reason saying from where.
    binder.setSnapshot(fleet(76));
    await until(() => bindings.get("th-1", "mulling")?.provider === "gpu-b", "th-1 rebound");
    expect(bindings.get("th-1", "mulling")).toMatchObject({
      revision: 2,
      reason: "rebound from qwen3:14b on gpu-a to qwen3:14b on gpu-b",
    });

    send("close", "th-1");
    await until(
      () => bindings.get("th-1", "mulling") === undefined && bindings.get("th-1", "triage") === undefined,
      "th-1 removed",
    );
    expect(binder.size).toBe(0);
  });

  it("publishes why a thread's agent cannot be bound, and skips events that are not ours", async () => {
    await start();
    binder.setSnapshot(fleet(0));
    send("open", "th-2", "crew/ghost");
    await until(() => bindings.get("th-2", "mulling") !== undefined, "th-2 published");
    expect(bindings.get("th-2", "mulling")).toMatchObject({
      kind: "unschedulable",
      reason: "no Agent crew/ghost",
      conditions: [
        { type: "Scheduled", status: "False", reason: "Unschedulable", message: "no Agent crew/ghost" },
      ],
    });
    kv.messages.publish("kubemoot.discussion.crew.th-3.open", new TextEncoder().encode("{not json"));
    kv.messages.publish(
      "kubemoot.discussion.crew.th-3.open",
      new TextEncoder().encode('{"v":2,"agent":"crew/a"}'),
    );
    kv.messages.publish(
      "kubemoot.discussion.crew.th-3.reopen",
      new TextEncoder().encode('{"v":1,"agent":"crew/a"}'),
    );
    send("open", "th-4");
    await until(() => bindings.get("th-4", "mulling") !== undefined, "th-4 bound");
    expect(bindings.get("th-3", "mulling")).toBeUndefined();
    expect(binder.size).toBe(2);
  });

  it("moves a thread off a provider whose latest probe failed, before the provider state says not ready", async () => {
    await start();
    // gpu-a better by 10 points: within the margin.
    binder.setSnapshot(fleet(40));
    send("open", "th-6");
    await until(() => bindings.get("th-6", "mulling")?.provider === "gpu-a", "th-6 bound to gpu-a");
    // The snapshot still says gpu-a is ready (the publisher waits for three failures).
    binder.setFailingProviders(new Set(["gpu-a"]));
    await until(() => bindings.get("th-6", "mulling")?.provider === "gpu-b", "th-6 moved to gpu-b");
    expect(bindings.get("th-6", "mulling")?.revision).toBe(2);
    // gpu-a answers again: the thread stays, since going back needs the hysteresis margin.
    binder.setFailingProviders(new Set());
    await binder.settled();
    expect(bindings.get("th-6", "mulling")).toMatchObject({ provider: "gpu-b", revision: 2 });
  });

  it("ignores a close sent for another agent's thread", async () => {
    await start();
    binder.setSnapshot(fleet(0));
    send("open", "th-7");
    await until(() => bindings.get("th-7", "mulling") !== undefined, "th-7 bound");
    send("close", "th-7", "crew/other");
    send("open", "th-8");
    await until(() => bindings.get("th-8", "mulling") !== undefined, "th-8 bound");
    expect(bindings.get("th-7", "mulling")?.agent).toBe("crew/a");
    expect(binder.size).toBe(2);
  });

  it("rewrites a live thread's values within the TTL, writes nothing when nothing is due, and drops an abandoned thread", async () => {
    bindings = await DiscussionBindings.open(kv);
    await bindings.ready;
    let t = NOW.getTime();
    binder = new DiscussionBinder({
      bus: kv.messages,
      bindings,
      logger: silentLogger,
      now: () => new Date(t),
      sweepMs: 20,
    });
    binder.start();
    binder.setSnapshot(fleet(0));
    send("open", "th-9");
    await until(() => bindings.get("th-9", "mulling") !== undefined, "th-9 bound");
    await binder.settled();
    const written = bindings.revision;
    // Sweeps with nothing due write nothing.
    await new Promise((r) => setTimeout(r, 100));
    expect(bindings.revision).toBe(written);
    // Ten minutes on: both values are written again, unchanged (same revision of their own).
    t += 10 * 60_000;
    await until(() => bindings.revision >= written + 2, "th-9 refreshed");
    expect(bindings.get("th-9", "mulling")?.revision).toBe(1);
    // Not opened again for over 30 minutes: dropped, its values removed.
    t += 21 * 60_000;
    await until(() => bindings.get("th-9", "mulling") === undefined, "th-9 dropped");
    expect(binder.size).toBe(0);
  });

  it("binds again only for a snapshot that says something new to a thread", async () => {
    await start();
    binder.setSnapshot(fleet(0));
    send("open", "th-10");
    await until(() => bindings.get("th-10", "mulling") !== undefined, "th-10 bound");
    await binder.settled();
    const runs = binder.bindRuns;
    // A reconcile after a heartbeat: the same content (an Agent's status does not count).
    const same = fleet(0);
    binder.setSnapshot({
      ...same,
      agents: same.agents.map((a) => ({ ...a, status: { conditions: [] } })),
    });
    await binder.settled();
    expect(binder.bindRuns).toBe(runs);
    binder.setSnapshot(fleet(10));
    await binder.settled();
    expect(binder.bindRuns).toBe(runs + 1);
  });

  it("leaves a live thread to its first agent", async () => {
    await start();
    binder.setSnapshot(fleet(0));
    send("open", "th-5");
    send("open", "th-5", "crew/other");
    await until(() => bindings.get("th-5", "mulling") !== undefined, "th-5 bound");
    expect(bindings.get("th-5", "mulling")?.agent).toBe("crew/a");
  });
});
