// Cluster: three nats-servers joined by routes, buckets with 3 replicas. Two sidecar processes
// claim for a while; mid-run the node leading the tickets stream is SIGKILLed. Claims continue
// on the two survivors (after a short election, during which they report StateUnavailable), and
// the independent checker sees no overcommit at any revision.
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_TICKETS_BUCKET } from "../../src/state/buckets.js";
import {
  type ContentionBuckets,
  prepareBuckets,
  Referee,
  startRacers,
  totals,
} from "../helpers/contention/index.js";
import { type NatsCluster, startNatsCluster } from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";

const STATES = [
  providerState("node-a", { totalVramMiB: 16384, lastProbedAt: "" }),
  providerState("node-b", {
    totalVramMiB: 24563,
    loadedModelFootprintsMiB: { warm: 6000 },
    lastProbedAt: "",
  }),
];
const PROVIDERS = [
  {
    name: "node-a",
    models: [
      { model: "c1", footprint: 9000 },
      { model: "c2", footprint: 7000 },
      { model: "c3", footprint: 5000 },
    ],
  },
  {
    name: "node-b",
    models: [
      { model: "warm", footprint: 6000 },
      { model: "c1", footprint: 9000 },
      { model: "c2", footprint: 7000 },
    ],
  },
];

describe("cluster: one of three servers dies mid-run", () => {
  let cluster: NatsCluster;
  let buckets: ContentionBuckets;

  beforeAll(async () => {
    cluster = await startNatsCluster(3);
    buckets = await prepareBuckets(cluster.urls, STATES, 3);
  });

  afterAll(async () => {
    await buckets?.close();
    await cluster?.dispose();
  });

  it("keeps granting claims and never overcommits", async () => {
    const log: string[] = [];
    const referee = await Referee.start(cluster.urls, STATES, (e) => {
      log.push(`${e.revision} ${e.operation} ${e.key} ${new TextDecoder().decode(e.value).slice(0, 400)}`);
    });
    const { checker } = referee;
    // Which node leads the tickets stream (the hardest one to lose).
    const nc = await connect({ servers: cluster.urls });
    const info = await (await jetstreamManager(nc)).streams.info(`KV_${PROVIDER_TICKETS_BUCKET}`);
    await nc.close();
    expect(info.config.num_replicas).toBe(3);
    const leader = info.cluster?.leader;
    const victim = cluster.servers[Math.max(0, ["n1", "n2", "n3"].indexOf(leader ?? "n1"))]!;

    const startAt = Date.now() + 500;
    const racers = startRacers(2, (id) => ({
      id: `c${id}`,
      servers: cluster.urls,
      replicas: 3,
      seed: 7 + id,
      claimers: 8,
      // Long enough after the kill for an election on a loaded machine (once, in CI, no claim
      // was granted in the 10.5 s left after the kill; the election time is logged below).
      durationMs: 22000,
      startAt,
      holdMs: [0, 5],
      refusedPauseMs: 5,
      providers: PROVIDERS,
      storeOptions: { catchUpTimeoutMs: 1000 },
    }));
    await racers.ready;
    await new Promise((r) => setTimeout(r, startAt - Date.now() + 3000));
    const killedAt = Date.now();
    await victim.kill();
    // How long the surviving servers take to elect a new leader for the tickets stream.
    const survivors = cluster.servers.filter((s) => s !== victim).map((s) => s.url);
    // A diagnostic only: it never fails the test (the JetStream API itself is unavailable
    // until the meta leader is re-elected too).
    const electionMs = await (async () => {
      const nc2 = await connect({ servers: survivors }).catch(() => undefined);
      if (!nc2) return Number.NaN;
      try {
        const jsm2 = await jetstreamManager(nc2, { timeout: 1000, checkAPI: false });
        while (Date.now() - killedAt < 20_000) {
          const i = await jsm2.streams.info(`KV_${PROVIDER_TICKETS_BUCKET}`).catch(() => undefined);
          const l = i?.cluster?.leader;
          if (l && l !== leader) return Date.now() - killedAt;
          await new Promise((r) => setTimeout(r, 100));
        }
        return Number.NaN;
      } catch {
        return Number.NaN;
      } finally {
        await nc2.close().catch(() => undefined);
      }
    })();
    const t = totals(await racers.done);
    await referee.finish(30_000);

    const okBefore = t.timeline.filter(([at, k]) => k === "ok" && at < killedAt).length;
    const okAfter = t.timeline.filter(([at, k]) => k === "ok" && at > killedAt + 100).length;
    console.log(
      `cluster: killed ${leader ?? "?"} (stream leader); new leader after ${electionMs} ms; ` +
        `${okBefore} granted before, ${okAfter} after; ` +
        `${t.errors.length} unavailable errors during the election; ${checker.revisionsChecked} revisions checked, ` +
        `follower restarts ${referee.restarts}`,
    );
    expect(okBefore).toBeGreaterThan(10);
    expect(okAfter).toBeGreaterThan(10);
    expect(t.errors.filter((e) => e !== "KUBEMOOT_STATE_UNAVAILABLE" && !e.startsWith("release:"))).toEqual(
      [],
    );
    expect(t.contention).toBe(0);
    if (checker.violations.length > 0) {
      const v = checker.violations[0]!;
      console.log(JSON.stringify(v));
      console.log(
        log
          .filter((l) => {
            const r = Number(l.split(" ")[0]);
            return r > v.revision - 40 && r <= v.revision + 3;
          })
          .join("\n"),
      );
    }
    expect(checker.violations).toEqual([]);
    expect(referee.unseen(t.granted)).toEqual([]);
  });
});
