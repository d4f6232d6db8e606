// The race: 4 sidecar processes × 16 concurrent claimers, 5,120 claims against three providers
// whose room fits only some of them, on a real nats-server. An independent checker follows
// every revision of the tickets bucket and recomputes each provider's budget after each one.
// Progress: no claim gives up for contention, and every "no-room" refusal is justified by the
// state at the revision it was decided on (it counted no released ticket, and the claim really
// did not fit) — so whenever room existed, the claim won or another claim took the room.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_TICKETS_BUCKET } from "../../src/state/buckets.js";
import { connectNatsKv } from "../../src/state/nats-kv.js";
import { openStateStore, type StateStore } from "../../src/state/store.js";
import { NatsServer } from "../helpers/nats-server.js";
import { OvercommitChecker, type RefusalRecord, unjustifiedRefusals } from "../helpers/overcommit-checker.js";
import { providerState } from "../helpers/state-fixtures.js";
import { TicketFollower } from "../helpers/ticket-follower.js";
import { startWorker } from "../helpers/workers.js";

interface Report {
  claims: number;
  granted: string[];
  refusals: RefusalRecord[];
  errors: string[];
  contention: number;
  maxViewAgeMs: number;
  wins: Record<string, number>;
  casConflicts: number;
  durationMs: number;
}

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
  let setup: StateStore;

  beforeAll(async () => {
    server = await NatsServer.start();
    // Pre-create the tickets bucket with history 64 so the checker can read every revision.
    const kv = await connectNatsKv({ servers: server.url });
    await kv.bucket(PROVIDER_TICKETS_BUCKET, {
      history: 64,
      ttlMs: 600_000,
      maxValueBytes: 4096,
      replicas: 1,
    });
    await kv.close();
    setup = await openStateStore(server.url);
    for (const s of STATES) await setup.providerWriter.publish(s);
  });

  afterAll(async () => {
    await setup?.close();
    await server?.dispose();
  });

  it("never overcommits at any revision, and always makes progress", async () => {
    const checker = new OvercommitChecker(new Map(STATES.map((s) => [s.name, s])));
    const putAt = new Map<string, number>();
    const deletedAt = new Map<string, number>();
    const follower = await TicketFollower.start(server.url, PROVIDER_TICKETS_BUCKET, (e) => {
      checker.apply(e.key, e.operation, e.value, e.revision);
      const id = e.key.slice(e.key.indexOf("__") + 2);
      if (e.operation === "PUT") putAt.set(id, e.revision);
      else deletedAt.set(id, e.revision);
    });

    const workers = Array.from({ length: WORKERS }, (_, id) =>
      startWorker<Report>({
        id,
        servers: server.url,
        seed: 1000 + id,
        claimers: CLAIMERS,
        claimsPerClaimer: CLAIMS_PER_CLAIMER,
        holdMs: [0, 4],
        refusedPauseMs: 2,
        recordRefusals: true,
        providers: PROVIDERS,
      }),
    );
    const reports = await Promise.all(workers.map((w) => w.done));
    await follower.caughtUp();
    await follower.stop();

    const claims = reports.reduce((n, r) => n + r.claims, 0);
    const granted = reports.flatMap((r) => r.granted);
    const refusals = reports.flatMap((r) => r.refusals);
    const errors = reports.flatMap((r) => r.errors);
    const conflicts = reports.reduce((n, r) => n + r.casConflicts, 0);
    console.log(
      `race: ${claims} claims, ${granted.length} granted, ${refusals.length} refused, ${conflicts} CAS conflicts, ` +
        `${checker.revisionsChecked} revisions checked, max view age ${Math.max(...reports.map((r) => r.maxViewAgeMs)).toFixed(1)} ms, ` +
        `${Math.max(...reports.map((r) => r.durationMs)).toFixed(0)} ms`,
    );

    expect(claims).toBeGreaterThanOrEqual(5000);
    expect(errors).toEqual([]);
    // No overcommit at any revision, and the checker saw every ticket that was ever granted.
    expect(checker.violations).toEqual([]);
    expect(granted.filter((id) => !putAt.has(id))).toEqual([]);
    expect(checker.revisionsChecked).toBeGreaterThan(granted.length);
    // Room was contended: some claims were refused, some conflicted, all providers served.
    expect(refusals.length).toBeGreaterThan(100);
    expect(conflicts).toBeGreaterThan(0);
    for (const p of PROVIDERS)
      expect(reports.reduce((n, r) => n + (r.wins[p.name] ?? 0), 0)).toBeGreaterThan(0);

    // Progress: nobody gave up for contention; every refusal is justified.
    expect(reports.reduce((n, r) => n + r.contention, 0)).toBe(0);
    expect(refusals.filter((r) => r.reason !== "no-room")).toEqual([]);
    const states = new Map(STATES.map((s) => [s.name, s]));
    const unjustified = unjustifiedRefusals(refusals, states, deletedAt);
    expect(unjustified).toEqual([]);
  });
});
