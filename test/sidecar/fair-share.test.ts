// Fair share across crews, fleet-wide (docs/rules/fairness.md): real sidecar processes of two
// crews on one nats-server call one emulated card with two slots through their Ollama proxies.
// Each property is measured with fair share on and, in the same test, off: off, the crew with
// more pods takes the card; on, the crews share it, interactive calls go first, and a dead
// sidecar's waiters stop counting within their lease.
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jainIndex } from "../../src/core/index.js";
import {
  type CrewSpec,
  crewWait,
  type FairCard,
  measureWindow,
  startCrews,
  startFairCard,
  tokensByCrew,
} from "../helpers/fair-crews.js";

const CARD = { slots: 2, timeScale: 1, tokensPerS: 200 };
const OUTPUT_TOKENS = 48;
/** What an interactive call may wait beyond the one call ahead of it (ms). */
const WAKE_UP_ALLOWANCE_MS = 100;

let card: FairCard;

beforeAll(async () => {
  card = await startFairCard(CARD);
}, 60_000);

afterAll(async () => {
  await card?.close();
});

async function shares(crews: CrewSpec[], fair: boolean, windowMs = 8_000) {
  const run = await startCrews(card, crews, { fair, outputTokens: OUTPUT_TOKENS });
  const { from, to } = await measureWindow(2_000, windowMs);
  await run.stop();
  expect(run.records.filter((r) => r.status !== 200)).toEqual([]);
  return {
    tokens: tokensByCrew(run.records, from, to),
    records: run.records.filter((r) => r.endedAt >= from && r.endedAt < to),
  };
}

describe("fair share across crews", () => {
  it("4 pods against 1: off, the bigger crew takes the card; on, the crews share it", async () => {
    const crews: CrewSpec[] = [
      { name: "crew-a", sidecars: 4, loops: 8 },
      { name: "crew-b", sidecars: 1, loops: 2 },
    ];
    const off = await shares(crews, false);
    const on = await shares(crews, true);
    const j = (t: Map<string, number>) => jainIndex([t.get("crew-a") ?? 0, t.get("crew-b") ?? 0]);
    // Off: about the loops' ratio (8:2 gives 0.74); on: within a few calls of equal.
    expect(j(off.tokens), JSON.stringify([...off.tokens])).toBeLessThan(0.85);
    expect(j(on.tokens), JSON.stringify([...on.tokens])).toBeGreaterThan(0.93);
  }, 120_000);

  it("crews weighted 1 : 2 : 4 get about 1/7, 2/7 and 4/7 of the card; off, a third each", async () => {
    const weights: Record<string, number> = { "crew-w1": 1, "crew-w2": 2, "crew-w4": 4 };
    const crews = (tag: string): CrewSpec[] =>
      Object.entries(weights).map(([name, weight]) => ({
        name: `${name}${tag}`,
        sidecars: 2,
        loops: 4,
        weight,
      }));
    // The largest relative error of a crew's share against its weight's share.
    const error = (t: Map<string, number>, tag: string) => {
      const total = [...t.values()].reduce((a, b) => a + b, 0);
      return Math.max(
        ...Object.entries(weights).map(
          ([name, w]) => Math.abs((t.get(`${name}${tag}`) ?? 0) / total - w / 7) / (w / 7),
        ),
      );
    };
    // New crews for each run: the first run's service (60 s half-life) must not carry over.
    const off = await shares(crews("-off"), false, 10_000);
    const on = await shares(crews("-on"), true, 10_000);
    // Off, the first claim wins: about a third each (error 1.33 for the weight-1 crew), but a
    // 10 s window of it is noisy (0.5 seen in CI); on, the weights hold within a few calls.
    expect(error(off.tokens, "-off"), JSON.stringify([...off.tokens])).toBeGreaterThan(0.3);
    expect(error(on.tokens, "-on"), JSON.stringify([...on.tokens])).toBeLessThan(0.25);
  }, 120_000);

  it("interactive calls under a batch flood wait about one call, not the flood", async () => {
    const crews: CrewSpec[] = [
      { name: "crew-a", sidecars: 4, loops: 8, priority: "batch" },
      { name: "crew-b", sidecars: 1, loops: 1, priority: "interactive", thinkMs: 500 },
    ];
    const off = crewWait((await shares(crews, false)).records, "crew-b");
    const onRun = await shares(crews, true);
    const on = crewWait(onRun.records, "crew-b");
    expect(off.p95WaitMs / off.serviceMs, JSON.stringify(off)).toBeGreaterThan(1.5);
    // On: at most the call ahead of it, plus the wake-up path's fixed cost (the release seen
    // through the watch, then a claim), which a loaded 2-core CI machine stretched past a fifth
    // of a 240 ms call once (1.21 calls); off waits behind the flood's queue.
    expect(on.p95WaitMs, JSON.stringify(on)).toBeLessThanOrEqual(on.serviceMs + WAKE_UP_ALLOWANCE_MS);
    // Each answer says the band it was admitted in and where it stood when it began to wait.
    expect(new Set(onRun.records.map((r) => `${r.crew}:${r.priority}`))).toEqual(
      new Set(["crew-a:batch", "crew-b:interactive"]),
    );
    expect(
      Math.max(...onRun.records.filter((r) => r.crew === "crew-a").map((r) => r.queuePosition)),
    ).toBeGreaterThan(0);
  }, 120_000);

  it("a sidecar killed while its calls wait leaves no waiter past its lease", async () => {
    const run = await startCrews(
      card,
      [
        { name: "crew-a", sidecars: 2, loops: 8 },
        { name: "crew-b", sidecars: 1, loops: 4 },
      ],
      // The killed sidecar's running calls hold their slots until their leases end: short ones.
      { fair: true, outputTokens: OUTPUT_TOKENS, env: { KUBEMOOT_TICKET_LEASE_SECONDS: "5" } },
    );
    await new Promise((r) => setTimeout(r, 3_000));
    const victim = run.sidecarsOf("crew-b")[0]!;
    victim.proc.kill("SIGKILL");
    const killedAt = Date.now();
    // A plain NATS KV client reads the demand bucket's waiter records.
    const nc = await connect({ servers: card.nats.url });
    try {
      const kv = await new Kvm(nc).open("kubemoot_model_demand");
      const liveWaiters = async () => {
        const out: { crew: string; expiresAt: number }[] = [];
        for await (const key of await kv.keys("queue.>")) {
          const e = await kv.get(key);
          if (e?.operation !== "PUT") continue;
          const v = e.json<{ crew: string; expiresAt: number }>();
          if (v.expiresAt > Date.now()) out.push(v);
        }
        return out;
      };
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await liveWaiters()).some((w) => w.crew === "crew-b")).toBe(true);
      await new Promise((r) => setTimeout(r, Math.max(0, killedAt + 16_000 - Date.now())));
      expect((await liveWaiters()).filter((w) => w.crew === "crew-b")).toEqual([]);
    } finally {
      await nc.close();
      await run.stop();
    }
  }, 120_000);
});
