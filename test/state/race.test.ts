// The race: 4 sidecar processes × 16 concurrent claimers, 5,120 claims against three providers
// whose room fits only some of them, on a real nats-server. An independent checker follows
// every revision of the tickets bucket and recomputes each provider's budget after each one.
// Progress: no claim gives up for contention, and every "no-room" refusal is justified by the
// state at the revision it was decided on (it counted no released ticket, and the claim really
// did not fit) — so whenever room existed, the claim won or another claim took the room.
// Fresh reads: no decision read state older than 200 ms.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ContentionBuckets,
  prepareBuckets,
  Referee,
  startRacers,
  totals,
} from "../helpers/contention/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";

const STATES = [
  // usable 21616, 5000 resident → 16616 free for cold loads
  providerState("race-a", {
    totalVramMiB: 24563,
    loadedModelFootprintsMiB: { warm: 5000 },
    lastProbedAt: "",
  }),
  // usable 14336, empty
  providerState("race-b", { totalVramMiB: 16384, lastProbedAt: "" }),
  // usable 10240, 3000 resident → 7240 free
  providerState("race-c", {
    totalVramMiB: 12288,
    loadedModelFootprintsMiB: { warm2: 3000 },
    lastProbedAt: "",
  }),
];

const PROVIDERS = [
  {
    name: "race-a",
    models: [
      { model: "warm", footprint: 5000 },
      { model: "c1", footprint: 9000 },
      { model: "c2", footprint: 7000 },
      { model: "c3", footprint: 5000 },
    ],
  },
  {
    name: "race-b",
    models: [
      { model: "c1", footprint: 9000 },
      { model: "c2", footprint: 7000 },
      { model: "c4", footprint: 4000 },
    ],
  },
  {
    name: "race-c",
    models: [
      { model: "warm2", footprint: 3000 },
      { model: "c2", footprint: 7000 },
      { model: "c3", footprint: 5000 },
    ],
  },
];

const WORKERS = 4;
const CLAIMERS = 16;
const CLAIMS_PER_CLAIMER = 80;

describe("race: many sidecar processes, one budget per provider", () => {
  let server: NatsServer;
  let buckets: ContentionBuckets;

  beforeAll(async () => {
    server = await NatsServer.start();
    buckets = await prepareBuckets(server.url, STATES);
  });

  afterAll(async () => {
    await buckets?.close();
    await server?.dispose();
  });

  it("never overcommits at any revision, and always makes progress", async () => {
    const referee = await Referee.start(server.url, STATES);
    const racers = startRacers(WORKERS, (id) => ({
      id,
      servers: server.url,
      seed: 1000 + id,
      claimers: CLAIMERS,
      claimsPerClaimer: CLAIMS_PER_CLAIMER,
      holdMs: [0, 4],
      refusedPauseMs: 2,
      recordRefusals: true,
      providers: PROVIDERS,
    }));
    const reports = await racers.done;
    await referee.finish();

    const t = totals(reports);
    const { checker } = referee;
    console.log(
      `race: ${t.claims} claims, ${t.granted.length} granted, ${t.refusals.length} refused, ${t.casConflicts} CAS conflicts, ` +
        `${checker.revisionsChecked} revisions checked, max view age ${t.maxViewAgeMs.toFixed(1)} ms, ` +
        `${t.durationMs.toFixed(0)} ms`,
    );

    expect(t.claims).toBeGreaterThanOrEqual(5000);
    expect(t.errors).toEqual([]);
    // No overcommit at any revision, and the checker saw every ticket that was ever granted.
    expect(checker.violations).toEqual([]);
    expect(referee.unseen(t.granted)).toEqual([]);
    expect(checker.revisionsChecked).toBeGreaterThan(t.granted.length);
    // Room was contended: some claims were refused, some conflicted, all providers served.
    expect(t.refusals.length).toBeGreaterThan(100);
    expect(t.casConflicts).toBeGreaterThan(0);
    for (const p of PROVIDERS) expect(t.wins[p.name] ?? 0).toBeGreaterThan(0);

    // Progress: nobody gave up for contention; every refusal is justified.
    expect(t.contention).toBe(0);
    expect(t.refusals.filter((r) => r.reason !== "no-room")).toEqual([]);
    expect(referee.unjustified(t.refusals)).toEqual([]);
    // Fresh reads: no decision read state older than the bound (docs/rules/state.md §10).
    expect(t.maxViewAgeMs).toBeLessThanOrEqual(200);
  });
});
