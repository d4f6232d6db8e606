// Claims decided on stale provider state (issue 16, item 6), across processes: 4 claimer
// processes on a real nats-server race for one 16 GiB card that holds alpha or beta (9000 MiB
// each, usable 14336), never both, while the test keeps publishing the card's state every
// 100–300 ms (far faster than probes): alpha unloaded, then resident again whenever beta is
// not there — so claimers' copies often lag behind. A claim for alpha is warm whenever the
// claimer's copy shows it resident.
// An alpha call and a beta call must never be in use at once (both would be loaded: 18000 MiB
// on 16384): each claimer process records when it was granted each ticket and when it released
// it. An independent follower of the tickets bucket also counts the revisions that show granted
// alpha and beta tickets live together (a ticket withdrawn on confirming is never used, and a
// warm one is granted only after it confirms itself), printed for diagnosis.
import { afterAll, beforeAll, expect, it } from "vitest";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import {
  type ContentionBuckets,
  classifyTicketsKey,
  prepareBuckets,
  Referee,
  startRacers,
  totals,
} from "../helpers/contention/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";

const ALPHA = providerState("flip", {
  totalVramMiB: 16384,
  loadedModelFootprintsMiB: { alpha: 9000 },
  lastProbedAt: "",
});
// STALE_RACE_FLIP_MS shortens the time between state changes (default 100–300 ms).
const FLIP_MS = Number(process.env.STALE_RACE_FLIP_MS ?? 100);
const EMPTY = providerState("flip", { totalVramMiB: 16384, lastProbedAt: "" });

let server: NatsServer;
let buckets: ContentionBuckets;
let flipper: StateStore;

beforeAll(async () => {
  server = await NatsServer.start();
  buckets = await prepareBuckets(server.url, [ALPHA]);
  flipper = await openStateStore(server.url);
});

afterAll(async () => {
  await flipper?.close();
  await buckets?.close();
  await server?.dispose();
});

it("a warm claim on a stale belief never coexists with a load that took its room", async () => {
  // Live tickets per model on the card, revision by revision.
  const live = new Map<string, string>();
  const overlaps: [string, string][][] = [];
  const overlapAt: number[] = [];
  let flipsDone = 0;
  let revisions = 0;
  const decoder = new TextDecoder();
  // Every entry and state change in arrival order, to show the history of an overlap.
  const history: string[] = [];
  const referee = await Referee.start(server.url, [ALPHA], (e) => {
    revisions++;
    const flipTicket = classifyTicketsKey(e.key).kind === "ticket" && e.key.includes("flip");
    const shortId = classifyTicketsKey(e.key).id.slice(0, 8);
    if (e.operation === "PUT" && flipTicket) {
      const t = JSON.parse(decoder.decode(e.value)) as Record<string, unknown>;
      history.push(
        `r${e.revision} PUT ${shortId} ${t.modelName} cold=${t.coldLoad} evicts=${JSON.stringify(t.evicts)} holder=${t.holderId}`,
      );
    } else if (e.key.includes("flip")) {
      const v =
        e.operation === "PUT"
          ? decoder
              .decode(e.value)
              .replace(/"ticketId":"(.{8})[^"]*"/g, "$1")
              .slice(0, 200)
          : "";
      history.push(`r${e.revision} ${e.operation} ${flipTicket ? shortId : e.key} ${v}`);
    }
    if (!flipTicket) return;
    if (e.operation === "PUT") {
      const t = JSON.parse(decoder.decode(e.value)) as { modelName: string };
      live.set(e.key, t.modelName);
    } else live.delete(e.key);
    const models = new Set(live.values());
    // A claim may write its ticket, find on confirming it that it does not fit, and withdraw
    // it: such a ticket is never used. Overlaps are judged on granted tickets at the end.
    if (models.has("alpha") && models.has("beta")) {
      overlaps.push([...live.entries()]);
      overlapAt.push(history.length);
    }
  });
  // The card's state as probes might publish it: alpha unloaded every so often (calls in
  // flight on it still count as loads), and resident again only while beta is not — a probe
  // never sees both. Every claimer's copy of it lags behind by some moment.
  let flipping = true;
  const flips = (async () => {
    let resident = true;
    let waitMs = FLIP_MS;
    while (flipping) {
      await new Promise((r) => setTimeout(r, waitMs + Math.random() * 2 * waitMs));
      const beta = [...live.values()].includes("beta");
      const next: boolean = resident ? false : !beta;
      // Alpha comes back only at a moment no beta ticket is live: look again soon, or on a
      // loaded machine (beta live nearly all the time) the run may see alpha return once or never.
      waitMs = !resident && beta ? Math.min(5, FLIP_MS) : FLIP_MS;
      if (next !== resident) {
        resident = next;
        const rev = await flipper.providerWriter.publish(resident ? ALPHA : EMPTY);
        history.push(`state r${rev}: ${resident ? "ALPHA" : "EMPTY"}`);
        flipsDone++;
      }
    }
  })();
  const racers = startRacers(4, (id) => ({
    id,
    servers: server.url,
    seed: 2000 + id,
    claimers: 8,
    durationMs: 8_000,
    holdMs: [2, 15],
    refusedPauseMs: 3,
    recordUses: true,
    providers: [
      {
        name: "flip",
        models: [
          { model: "alpha", footprint: 9000 },
          { model: "beta", footprint: 9000 },
        ],
      },
    ],
  }));
  const reports = await racers.done;
  flipping = false;
  await flips;
  await referee.finish();
  const t = totals(reports);
  const granted = new Set(t.granted);
  const grantedOverlaps = overlaps
    .map((snapshot, k) => ({ snapshot, at: overlapAt[k] as number }))
    .filter(({ snapshot }) => {
      const used = snapshot.filter(([key]) => granted.has(classifyTicketsKey(key).id));
      return used.some(([, m]) => m === "alpha") && used.some(([, m]) => m === "beta");
    });
  const both = grantedOverlaps.length;
  // What matters physically: an alpha call and a beta call in use at once, from grant to
  // release. A revision can show two granted tickets live while one of them was not granted yet
  // (a warm ticket confirms itself only once its copy shows the other released).
  const uses = reports.flatMap((r) => r.uses);
  const alphaUses = uses.filter((u) => u[2] === "alpha");
  const inUseTogether = uses
    .filter((u) => u[2] === "beta")
    .flatMap((b) => alphaUses.filter((a) => a[3] < b[4] && b[3] < a[4]).map((a) => [a[0], b[0]]));
  if (both > 0 && process.env.STALE_RACE_DUMP) {
    const first = grantedOverlaps[0]!;
    console.log(
      `first granted overlap: ${JSON.stringify(first.snapshot.map(([k, m]) => [k.slice(6, 14), m]))}`,
    );
    console.log(history.slice(Math.max(0, first.at - 60), first.at + 5).join("\n"));
  }
  console.log(
    `stale race: ${t.claims} claims, ${t.granted.length} granted, ${flipsDone} state changes, ${revisions} revisions, ${overlaps.length} with alpha and beta written, ${both} of them granted, ${inUseTogether.length} pairs of calls in use at once`,
  );
  expect(t.errors.filter((e) => !/fresh/.test(e))).toEqual([]);
  expect(t.granted.length).toBeGreaterThan(100);
  // Usually about 40 changes; alpha comes back only at a moment no beta ticket is live, and
  // in some runs beta stays live for most of the run. One return of alpha is the window tested.
  expect(flipsDone).toBeGreaterThanOrEqual(2);
  expect(uses.length).toBe(t.granted.length);
  expect(inUseTogether).toEqual([]);
});
