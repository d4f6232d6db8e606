// End-to-end placement through the sidecar as a real process: a real nats-server, emulated
// GPUs over HTTP, the provider publisher (the operator's half) writing provider state, and a
// grpc-js client loaded from the .proto (not our server's library).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import {
  bucketSettings,
  MODEL_DEMAND_BUCKET,
  openStateStore,
  type StateStore,
} from "../../src/state/index.js";
import { type Json, type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const CATALOG = {
  "qwen3:32b": 20000, // on disk; occupancy before any load: ×1.2 = 24000 (fits only a 5090)
  "qwen3:14b": 9000,
  "qwen3:8b": 4863,
  "big:20b": 14000, // ×1.2 = 16800
  "spare:4b": 4863, // never called: an idle model nobody has used, so its unload costs no reload
  "llama3:70b": 40000, // ×1.2 = 48000: fits no card here
};

interface Card {
  name: string;
  vramMiB: number;
}

let nats: NatsServer;
let store: StateStore;
let publisher: ProviderPublisher;
let sidecar: SidecarProcess;
let client: SchedulerClient;
let emulators: Map<string, EmulatorHandle> = new Map();

async function setCards(cards: Card[]): Promise<void> {
  for (const e of emulators.values()) await e.close();
  // New GPUs: forget what earlier tests' calls left resident.
  for (const r of (await store.tickets.everything()).residencies) {
    await store.tickets.clearResidency(r.provider, r.modelName);
  }
  emulators = new Map();
  for (const c of cards) {
    emulators.set(
      c.name,
      await startEmulator({
        listen: "127.0.0.1:0",
        vramMiB: c.vramMiB,
        models: CATALOG,
        contextLength: 8192,
        numParallel: 1,
        timeScale: 0.01,
      }),
    );
  }
  await publisher.setProviders(
    cards.map((c) => ({
      name: c.name,
      endpoint: emulators.get(c.name)!.url,
      totalVramMiB: c.vramMiB,
      maxParallel: 1,
      contextLength: 8192,
    })),
  );
  await publisher.probeNow();
}

/** Loads a model at a card's emulator (as if an earlier call had) and republishes. */
async function preload(card: string, model: string): Promise<void> {
  const res = await fetch(`${emulators.get(card)!.url}/api/generate`, {
    method: "POST",
    body: JSON.stringify({ model, options: { num_ctx: 8192 } }),
  });
  expect(res.status).toBe(200);
  await res.text();
  await publisher.probeNow(card);
}

async function residentAt(card: string): Promise<string[]> {
  const res = await fetch(`${emulators.get(card)!.url}/api/ps`);
  const body = (await res.json()) as { models: { name: string }[] };
  return body.models.map((m) => m.name).sort();
}

/**
 * Forgets the service times the fleet has measured (the demand bucket's use entries), so that a
 * test can state that nothing says how long a call takes: earlier tests ran calls, and an
 * unmeasured model is otherwise priced by size from the measured ones.
 */
async function forgetServiceTimes(): Promise<void> {
  const bucket = await store.kv.bucket(MODEL_DEMAND_BUCKET, bucketSettings(1)[MODEL_DEMAND_BUCKET]!);
  for (const key of await bucket.keys()) if (key.startsWith("use.")) await bucket.delete(key);
}

function cands(...list: [string, number][]): Json[] {
  return list.map(([model, score]) => ({ model, score }));
}

async function place(req: Json): Promise<Json> {
  return client.call("Place", { agent: "crew/a1", ...req });
}

async function liveTickets(): Promise<number> {
  let n = 0;
  for (const list of (await store.tickets.allTickets()).values()) n += list.length;
  return n;
}

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  publisher = new ProviderPublisher({ sink: store.providerWriter, intervalMs: 60_000 });
  publisher.start();
  sidecar = await startSidecarProcess(["--nats", nats.url, "--agent", "crew/a1", "--proxy-listen", ""]);
  client = schedulerClient(sidecar.apiAddress);
});

afterEach(async () => {
  // Every test releases what it placed; a leaked ticket fails the test that leaked it (and is
  // then cleared, so that one failure does not cascade into the next tests). The test's store
  // follows the bucket through a watch, so a release lands here a moment after it is answered.
  await waitUntil(async () => (await liveTickets()) === 0, 2000).catch(() => undefined);
  const left = await liveTickets();
  for (const [provider, list] of await store.tickets.allTickets()) {
    for (const t of list) await store.tickets.release({ provider, ticketId: t.ticketId });
  }
  expect(left).toBe(0);
});

afterAll(async () => {
  client?.close();
  const code = await sidecar?.stop();
  expect(code, sidecar?.output()).toBe(0);
  await publisher?.stop();
  for (const e of emulators.values()) await e.close();
  await store?.close();
  await nats?.dispose();
});

/**
 * Does what an agent does with a placement: runs the call at the endpoint with the model and
 * context it was given, then releases the ticket with the engine's own counts.
 */
async function runAndRelease(p: Json, via: SchedulerClient = client): Promise<Json> {
  const started = Date.now();
  const res = await fetch(`${p.endpoint}/api/chat`, {
    method: "POST",
    body: JSON.stringify({
      model: p.model,
      stream: false,
      messages: [{ role: "user", content: "Summarise the incident in one line." }],
      options: { num_ctx: Number(p.contextLength) || undefined, num_predict: 8 },
    }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { prompt_eval_count: number };
  const r = await via.call("Release", {
    ticketId: p.ticketId,
    outcome: "CALL_OUTCOME_SUCCEEDED",
    latencyMs: Date.now() - started,
    promptTokens: body.prompt_eval_count,
    promptChars: 36,
  });
  expect(r.released).toBe(true);
  return body;
}

/** Releases a ticket whose call the test did not run (reported as a success of `latencyMs`). */
async function release(p: Json, extra: Json = {}): Promise<void> {
  const r = await client.call("Release", {
    ticketId: p.ticketId,
    outcome: "CALL_OUTCOME_SUCCEEDED",
    latencyMs: 1000,
    ...extra,
  });
  expect(r.released).toBe(true);
}

describe("placement through the sidecar", () => {
  it("sends a small model to the small card when both are empty", async () => {
    await setCards([
      { name: "rtx5090", vramMiB: 32605 },
      { name: "rtx4090", vramMiB: 24563 },
    ]);
    const r = await place({ candidates: cands(["qwen3:8b", 50]) });
    expect(r.result).toBe("placement");
    expect(r.placement.provider).toBe("rtx4090");
    expect(r.placement.coldLoad).toBe(true);
    expect(Number(r.placement.footprintMib)).toBe(Math.ceil(4863 * 1.2));
    await runAndRelease(r.placement);
  });

  it("puts a model only the big card can hold on the big card", async () => {
    const r = await place({ candidates: cands(["qwen3:32b", 70]) });
    expect(r.placement.provider).toBe("rtx5090");
    await runAndRelease(r.placement);
  });

  it("reuses a warm copy instead of loading a second one", async () => {
    // The first test's call left 8b resident on the 4090; the 5090 has room for a second copy.
    expect(await residentAt("rtx4090")).toEqual(["qwen3:8b"]);
    const r = await place({ candidates: cands(["qwen3:8b", 50]) });
    expect(r.placement.provider).toBe("rtx4090");
    expect(r.placement.coldLoad).toBe(false);
    expect(Number(r.placement.contextLength)).toBe(8192);
    await runAndRelease(r.placement);
  });

  it("refuses a model no card can hold as model-too-large, naming it", async () => {
    const r = await place({ candidates: cands(["llama3:70b", 90]) });
    expect(r.result).toBe("refusal");
    expect(r.refusal.reason).toBe("REASON_MODEL_TOO_LARGE");
    expect(r.refusal.model).toBe("llama3:70b");
    expect(r.refusal.message).toContain("llama3:70b");
  });

  it("refuses a prompt longer than every context as prompt-too-large", async () => {
    const r = await place({ candidates: cands(["qwen3:8b", 50]), promptTokens: 9000 });
    expect(r.refusal.reason).toBe("REASON_PROMPT_TOO_LARGE");
    expect(Number(r.refusal.largestContext)).toBe(8192);
    // Equality fits.
    const ok = await place({ candidates: cands(["qwen3:8b", 50]), promptTokens: 8192 });
    expect(ok.result).toBe("placement");
    await runAndRelease(ok.placement);
  });

  it("reports what a call ran on through Attribute", async () => {
    const r = await place({ candidates: cands(["qwen3:8b", 50]), promptTokens: 1000 });
    await release(r.placement, { promptTokens: 1000, promptChars: 3500, latencyMs: 2500 });
    const a = await client.call("Attribute", { ticketId: r.placement.ticketId });
    expect(a.provider).toBe(r.placement.provider);
    expect(a.model).toBe("qwen3:8b");
    expect(a.success).toBe(true);
    expect(a.latencyMs).toBe("2500");
    expect(a.promptTokens).toBe("1000");
    expect(a.estimatedPromptTokens).toBe("1000");
    expect(a.releasedAt).toBeTruthy();
  });
});

describe("queue or unload", () => {
  // One 32605 MiB card (usable 28693) with 14b (9000 + 1352 KV) and an idle 4b (4863 + 1024
  // KV) resident: 16239 used, 12454 free. big:20b needs 16800, so only unloading the idle 4b
  // makes room; the 14b copy (an in-tolerance alternative) is busy with one call.
  it("unloads an idle model when the queue would be longer (and it is really unloaded)", async () => {
    await setCards([{ name: "duo", vramMiB: 32605 }]);
    await preload("duo", "qwen3:14b");
    await preload("duo", "spare:4b");
    await forgetServiceTimes();
    const busy = await place({ candidates: cands(["qwen3:14b", 60]) });
    expect(busy.placement.coldLoad).toBe(false);
    // Nothing says how long a big:20b call takes, so both options assume 30 s of service; the
    // busy 14b call just started and has ≈30 s to go, so waiting for it and then running
    // costs ≈60 s, against 1 s to unload the 4b, ≈16.4 s to load big:20b (16800/1024) and its
    // 30 s of service, plus nothing for the 4b's reload (nobody uses it): ≈47 s.
    const r = await place({ candidates: cands(["big:20b", 65], ["qwen3:14b", 60]) });
    expect(r.result).toBe("placement");
    expect(r.placement.model).toBe("big:20b");
    expect(r.placement.evicted).toEqual(["spare:4b"]);
    expect(await residentAt("duo")).toEqual(["qwen3:14b"]);
    await runAndRelease(r.placement);
    await runAndRelease(busy.placement);
  });

  it("queues at a busy copy when its call ends sooner than an unload", async () => {
    await setCards([{ name: "duo", vramMiB: 32605 }]);
    await preload("duo", "qwen3:14b");
    await preload("duo", "qwen3:8b");
    // Teach the sidecar that calls on "duo" take about a second.
    const first = await place({ candidates: cands(["qwen3:14b", 60]) });
    await runAndRelease(first.placement);
    const busy = await place({ candidates: cands(["qwen3:14b", 60]) });
    const r = await place({ candidates: cands(["big:20b", 65], ["qwen3:14b", 60]) });
    expect(r.result).toBe("refusal");
    expect(r.refusal.reason).toBe("REASON_GPU_BUSY");
    // The queue decision says when the busy 14b call should end: within the learned call time
    // (1 ms when that call is already overdue; 0 would mean no estimate).
    const est = Number(r.refusal.estimatedWaitMs);
    expect(est).toBeGreaterThan(0);
    expect(est).toBeLessThan(30_000);
    expect(await residentAt("duo")).toEqual(["qwen3:14b", "qwen3:8b"]);
    await runAndRelease(busy.placement);
  });
});

describe("waiting", () => {
  it("resumes a Wait when the call ahead of it releases", async () => {
    await setCards([{ name: "solo", vramMiB: 24563 }]);
    await preload("solo", "qwen3:14b");
    const busy = await place({ candidates: cands(["qwen3:14b", 60]) });
    // big:20b (16800) cannot fit next to the busy 14b and nothing idle can be unloaded:
    // the only option is the 14b copy, so the call waits for it.
    const events: Json[] = [];
    const w = client.stream(
      "Wait",
      { agent: "crew/a1", candidates: cands(["big:20b", 65], ["qwen3:14b", 60]), limitSeconds: 30 },
      (m) => events.push(m),
    );
    await waitUntil(() => events.length >= 1);
    expect(events[0]!.event).toBe("waiting");
    expect(events[0]!.waiting.refusal.reason).toBe("REASON_GPU_BUSY");
    // The wait is published as demand so that planners do not unload what it waits for.
    await waitUntil(async () => (await store.demand.snapshot()).wait.length === 1);
    await runAndRelease(busy.placement);
    const all = await w.done;
    expect(all.map((m) => m.event)).toEqual(["waiting", "placed"]);
    expect(all[1]!.placed.model).toBe("qwen3:14b");
    await runAndRelease(all[1]!.placed);
    await waitUntil(async () => (await store.demand.snapshot()).wait.length === 0);
  });

  it("stands aside at the wait limit", async () => {
    const busy = await place({ candidates: cands(["qwen3:14b", 60]) });
    const started = Date.now();
    const all = await client.stream("Wait", {
      agent: "crew/a1",
      candidates: cands(["big:20b", 65], ["qwen3:14b", 60]),
      limitSeconds: 1,
    }).done;
    expect(all.map((m) => m.event)).toEqual(["waiting", "standAside"]);
    expect(all[1]!.standAside.reason).toBe("REASON_GPU_BUSY");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    await runAndRelease(busy.placement);
  });

  it("ends a Wait when the client cancels, claiming nothing", async () => {
    const busy = await place({ candidates: cands(["qwen3:14b", 60]) });
    const events: Json[] = [];
    const w = client.stream(
      "Wait",
      { agent: "crew/a1", candidates: cands(["big:20b", 65], ["qwen3:14b", 60]), limitSeconds: 30 },
      (m) => events.push(m),
    );
    await waitUntil(() => events.length >= 1);
    w.cancel();
    await expect(w.done).rejects.toMatchObject({ code: 1 });
    await runAndRelease(busy.placement);
    // A released slot must not be taken by the cancelled wait.
    await new Promise((r) => setTimeout(r, 300));
    expect(await liveTickets()).toBe(0);
  });
});

describe("planning at selection", () => {
  it("holds a plan at Commit, pre-loads it, and the thread's first Place takes it", async () => {
    await setCards([{ name: "solo", vramMiB: 24563 }]);
    const c = await client.call("Commit", {
      agent: "crew/a1",
      threadId: "t-1",
      candidates: cands(["qwen3:8b", 50]),
      crew: "crew/c1",
    });
    expect(c.result).toBe("planned");
    expect(c.planned.coldLoad).toBe(true);
    // The pre-load overlaps prompt building: the model becomes resident without any call.
    await waitUntil(async () => (await residentAt("solo")).includes("qwen3:8b"));
    const intents = (await store.demand.snapshot()).intent;
    expect(intents.map((i) => i.model)).toEqual(["qwen3:8b"]);
    const p = await place({ threadId: "t-1", candidates: cands(["qwen3:8b", 50]) });
    expect(p.placement.fromPlan).toBe(true);
    expect(p.placement.ticketId).toBe(c.planned.ticketId);
    await runAndRelease(p.placement);
    const e = await client.call("EndThread", { agent: "crew/a1", threadId: "t-1" });
    expect(e.releasedTickets).toBe(0);
    // The test's own store follows the bucket through a watch: the sidecar's delete reaches it
    // a moment after EndThread answers.
    await waitUntil(async () => (await store.demand.snapshot()).intent.length === 0, 5000);
    expect((await store.demand.snapshot()).intent).toEqual([]);
  });

  it("releases an unused plan at EndThread", async () => {
    const c = await client.call("Commit", {
      agent: "crew/a1",
      threadId: "t-2",
      candidates: cands(["qwen3:8b", 50]),
    });
    expect(c.result).toBe("planned");
    // The test's own store follows the bucket through a watch: the plan's ticket, written
    // before Commit answered, reaches it a moment later (a read within the freshness bound
    // does not wait for writes made by other processes).
    await waitUntil(async () => (await liveTickets()) === 1, 5000).catch(() => undefined);
    const seen = await liveTickets();
    const e = await client.call("EndThread", { agent: "crew/a1", threadId: "t-2" });
    expect(seen).toBe(1);
    expect(e.releasedTickets).toBe(1);
  });
});

describe("two sidecars", () => {
  it("converge on one copy being loaded instead of loading a second", async () => {
    await setCards([
      { name: "rtx5090", vramMiB: 32605 },
      { name: "rtx4090", vramMiB: 24563 },
    ]);
    const other = await startSidecarProcess(["--nats", nats.url, "--agent", "crew/a2", "--proxy-listen", ""]);
    const c2 = schedulerClient(other.apiAddress);
    try {
      const a = await place({ candidates: cands(["qwen3:14b", 60]) });
      expect(a.placement.coldLoad).toBe(true);
      // The other sidecar sees the load in flight (its single slot taken by a's call): the
      // 14b's calls are known to be short (earlier tests ran them), so waiting for that copy
      // beats loading a second one. It queues in the sidecar, not at the engine: gpu-busy now,
      // with the wait it expects.
      const b = await c2.call("Place", { agent: "crew/a2", candidates: cands(["qwen3:14b", 60]) });
      expect(b.result).toBe("refusal");
      expect(b.refusal.reason).toBe("REASON_GPU_BUSY");
      expect(Number(b.refusal.estimatedWaitMs)).toBeGreaterThan(0);
      await runAndRelease(a.placement);
      // Once a's call is over, the copy it loaded takes b's call: one copy, no second load.
      await waitUntil(async () => (await liveTickets()) === 0, 2000);
      const again = await c2.call("Place", { agent: "crew/a2", candidates: cands(["qwen3:14b", 60]) });
      expect(again.placement.provider).toBe(a.placement.provider);
      expect(again.placement.coldLoad).toBe(false);
      await runAndRelease(again.placement, c2);
    } finally {
      c2.close();
      expect(await other.stop()).toBe(0);
    }
  });
});

describe("bad input", () => {
  it("answers INVALID_ARGUMENT naming the field, and claims nothing", async () => {
    const cases: [Json, string][] = [
      [{ agent: "crew/a1", candidates: cands(["qwen3:8b", 1]), promptTokens: -5 }, "prompt_tokens"],
      [{ agent: "crew/a1", candidates: cands(["qwen3:8b", 1]), phase: "brainstorm" }, "phase"],
      [{ agent: "not an agent", candidates: cands(["qwen3:8b", 1]) }, "agent"],
      [{ agent: "crew/a1", candidates: [{ model: "", score: 1 }] }, "candidates[0].model"],
      [{ agent: "crew/a1", candidates: cands(["qwen3:8b", 1]), maxOutputTokens: -1 }, "max_output_tokens"],
    ];
    for (const [req, field] of cases) {
      const err = await client.call("Place", req).then(
        () => undefined,
        (e: Json) => e,
      );
      expect(err?.code, JSON.stringify(req)).toBe(3);
      expect(err?.details).toContain(field);
    }
  });

  it("answers INVALID_ARGUMENT to bytes that are not a PlaceRequest", async () => {
    const err = await new Promise<Json>((resolve) =>
      client.raw.makeUnaryRequest(
        "/kubemoot.scheduler.v1.SchedulerService/Place",
        (x: Buffer) => x,
        (x: Buffer) => x,
        Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
        (e) => resolve(e as Json),
      ),
    );
    expect(err.code).toBe(3);
    expect(err.details).toContain("malformed");
  });

  it("answers Connect JSON garbage with HTTP 400 and a JSON error", async () => {
    const res = await fetch(`${sidecar.apiUrl}/kubemoot.scheduler.v1.SchedulerService/Place`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"agent": "crew/a1", "candidates": [{"model": 7',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("invalid_argument");
    const huge = await fetch(`${sidecar.apiUrl}/kubemoot.scheduler.v1.SchedulerService/Place`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent: "crew/a1", threadId: "x".repeat(5 << 20) }),
    });
    expect(huge.status).toBeGreaterThanOrEqual(400);
    expect(huge.status).toBeLessThan(500);
  });

  it("treats Release of an unknown ticket as done, and Renew of one as NOT_FOUND", async () => {
    const r = await client.call("Release", { ticketId: "no-such-ticket", outcome: "CALL_OUTCOME_SUCCEEDED" });
    expect(r.released).toBe(false);
    const err = await client.call("Renew", { ticketId: "no-such-ticket" }).catch((e: Json) => e);
    expect(err.code).toBe(5);
  });

  it("still serves after all of that", async () => {
    const ok = await place({ candidates: cands(["qwen3:8b", 50]) });
    expect(ok.result).toBe("placement");
    await runAndRelease(ok.placement);
    const health = await fetch(`${sidecar.apiUrl}/readyz`);
    expect(health.status).toBe(200);
  });
});
