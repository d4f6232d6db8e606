// Per-namespace NATS rights (docs/deploy.md "NATS credentials", the scoped key layout of
// docs/rules/state.md §2): a real nats-server runs with exactly the authorization the chart
// renders for an operator user and two sidecar users, one for namespace crew-a and one for
// crew-b. With plain @nats-io clients (not our state layer, so that only the server's rules
// are under test): each sidecar user writes its own namespace's tickets and demand and the
// keys all sidecars share; the server refuses it the other namespace's keys and provider
// state (the write fails, the server logs a "Publish Violation", the key is unchanged); and
// every user reads the three buckets and watches them through ordered pull consumers.
import { DeliverPolicy, type JetStreamClient, jetstream } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { connect, type NatsConnection, nkeyAuthenticator, nkeys } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderChart } from "../chart/render.js";
import { NatsServer } from "../helpers/nats-server.js";
import { waitUntil } from "../helpers/wait-until.js";

const STATE = "kubemoot_provider_state";
const TICKETS = "kubemoot_provider_tickets";
const DEMAND = "kubemoot_model_demand";
const MINUTE_MS = 60_000;

interface User {
  nkey: string;
  seed: Uint8Array;
}

function newUser(): User {
  const kp = nkeys.createUser();
  return { nkey: kp.getPublicKey(), seed: kp.getSeed() };
}

/** The server's `authorization` block exactly as the chart renders it (default key layout). */
function chartAuthorization(operator: User, sidecars: { user: User; namespaces: string[] }[]): string {
  const objects = renderChart({
    includeCrds: false,
    set: [
      "nats.auth.enabled=true",
      `nats.auth.operator.nkey=${operator.nkey}`,
      ...sidecars.flatMap((s, i) => [
        `nats.auth.sidecars[${i}].nkey=${s.user.nkey}`,
        `nats.auth.sidecars[${i}].namespaces={${s.namespaces.join(",")}}`,
      ]),
    ],
  });
  const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name.endsWith("-nats-authorization"));
  const conf = (secret?.stringData as Record<string, string> | undefined)?.["authorization.conf"];
  if (!conf) throw new Error("the chart rendered no nats-authorization Secret with authorization.conf");
  return conf;
}

/** One user's connection, JetStream client and the three buckets. */
interface Session {
  nc: NatsConnection;
  js: JetStreamClient;
  state: KV;
  tickets: KV;
  demand: KV;
}

async function session(server: NatsServer, user: User, create: boolean): Promise<Session> {
  const nc = await connect({ servers: server.url, authenticator: nkeyAuthenticator(user.seed) });
  // A refused publish is answered at once (the server's -ERR fails the request); the timeout
  // only bounds a refusal the client could not match to its request.
  const js = jetstream(nc, { timeout: 2000 });
  const kvm = new Kvm(js);
  // Reads go to the stream leader, as in src/state: no direct gets.
  const open = (name: string, ttl: number, maxValueSize: number) =>
    create
      ? kvm.create(name, { history: 1, ...(ttl > 0 ? { ttl } : {}), maxValueSize, allow_direct: false })
      : kvm.open(name);
  return {
    nc,
    js,
    state: await open(STATE, 0, -1),
    tickets: await open(TICKETS, 10 * MINUTE_MS, 4096),
    demand: await open(DEMAND, 6 * 60 * MINUTE_MS, 4096),
  };
}

const operatorUser = newUser();
const crewAUser = newUser();
const crewBUser = newUser();
let nats: NatsServer;
let op: Session;
let a: Session;
let b: Session;

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const id = () => crypto.randomUUID();

/** How many times the server has logged refusing `user` a publish to `subject`. */
function violations(user: User, subject: string): number {
  const s = subject.replace(/[$.*]/g, "\\$&");
  return (
    nats.log().match(new RegExp(`Publish Violation - Nkey "${user.nkey}", Subject "${s}"`, "g"))?.length ?? 0
  );
}

/** `op` fails as the server's refusal: a permissions error (or, at worst, a timeout). */
async function refused(user: User, bucket: string, key: string, op: () => Promise<unknown>): Promise<void> {
  const before = violations(user, `$KV.${bucket}.${key}`);
  const err = await op().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `${bucket} ${key}: the server should have refused the write`).toBeInstanceOf(Error);
  expect(String(err)).toMatch(/permissions violation|timeout/i);
  await waitUntil(
    () => violations(user, `$KV.${bucket}.${key}`) > before,
    5000,
    `the server's Publish Violation for ${bucket} ${key}`,
  );
}

beforeAll(async () => {
  nats = await NatsServer.start({
    config: chartAuthorization(operatorUser, [
      { user: crewAUser, namespaces: ["crew-a"] },
      { user: crewBUser, namespaces: ["crew-b"] },
    ]),
  });
  // The buckets are the operator's to create; the sidecars' users only open them.
  op = await session(nats, operatorUser, true);
  a = await session(nats, crewAUser, false);
  b = await session(nats, crewBUser, false);
  await op.state.put("gpu-1", json({ name: "gpu-1", endpoint: "http://gpu-1:11434" }));
}, 30_000);

afterAll(async () => {
  for (const s of [a, b, op]) await s?.nc.close();
  await nats?.dispose();
});

describe("per-namespace NATS rights (scoped key layout, as the chart renders them)", () => {
  it("a sidecar user writes its namespace's tickets and demand and the shared keys", async () => {
    const before = nats.log().length;
    const ticket = `t.gpu-1.crew-a.${id()}`;
    expect(await a.tickets.put(ticket, json({ provider: "gpu-1" }))).toBeGreaterThan(0);
    await a.tickets.delete(ticket);
    expect((await op.tickets.get(ticket))?.operation).toBe("DEL");
    const kept = `t.gpu-1.crew-a.${id()}`;
    await a.tickets.create(kept, json({ provider: "gpu-1" }));
    await a.tickets.purge(kept);
    // The shared keys: claim guard (compare-and-set, as the claim protocol writes it),
    // residency overlay, suspect mark; and the namespace's use rate.
    const rev = await a.tickets.create("g.gpu-1.claim", json({ v: 1, pending: [] }));
    await a.tickets.update("g.gpu-1.claim", json({ v: 1, pending: [], stateRev: 1 }), rev);
    await b.tickets.put("g.gpu-1.claim", json({ v: 1, pending: [], stateRev: 2 }));
    await a.tickets.put("r.gpu-1.m", json({ provider: "gpu-1", modelName: "m" }));
    await a.tickets.put("s.gpu-1.suspect", json({ provider: "gpu-1", by: "crew-a/a1" }));
    await a.demand.put("use.m.crew-a", json({ kind: "use", model: "m" }));
    await a.demand.put("wait.m.crew-a.a1", json({ kind: "wait", model: "m" }));
    await a.demand.put("intent.m.crew-a.a1", json({ kind: "intent", model: "m" }));
    await a.demand.put("sel.crew-a.c.a1", json({ kind: "sel" }));
    await a.demand.delete("wait.m.crew-a.a1");
    await b.demand.put("wait.m.crew-b.b1", json({ kind: "wait", model: "m" }));
    expect((await op.tickets.get("g.gpu-1.claim"))?.json()).toEqual({ v: 1, pending: [], stateRev: 2 });
    expect((await op.demand.get("sel.crew-a.c.a1"))?.json()).toEqual({ kind: "sel" });
    expect(nats.log().slice(before)).not.toMatch(/Violation/);
  });

  it("the server refuses a sidecar user another namespace's tickets: the key stays", async () => {
    const theirs = `t.gpu-1.crew-b.${id()}`;
    await b.tickets.put(theirs, json({ provider: "gpu-1", holderId: "b1@1" }));
    await refused(crewAUser, TICKETS, theirs, () => a.tickets.delete(theirs));
    await refused(crewAUser, TICKETS, theirs, () => a.tickets.put(theirs, json({ provider: "gpu-1" })));
    const fresh = `t.gpu-1.crew-b.${id()}`;
    await refused(crewAUser, TICKETS, fresh, () => a.tickets.create(fresh, json({ provider: "gpu-1" })));
    const entry = await op.tickets.get(theirs);
    expect(entry?.operation).toBe("PUT");
    expect(entry?.json()).toEqual({ provider: "gpu-1", holderId: "b1@1" });
    expect(await op.tickets.get(fresh)).toBeNull();
    // And the other way round.
    const mine = `t.gpu-1.crew-a.${id()}`;
    await a.tickets.put(mine, json({ provider: "gpu-1" }));
    await refused(crewBUser, TICKETS, mine, () => b.tickets.delete(mine));
    expect((await op.tickets.get(mine))?.operation).toBe("PUT");
  });

  it("the server refuses a sidecar user another namespace's demand", async () => {
    await refused(crewAUser, DEMAND, "wait.m.crew-b.x", () => a.demand.put("wait.m.crew-b.x", json({})));
    await refused(crewAUser, DEMAND, "wait.m.crew-b.b1", () => a.demand.delete("wait.m.crew-b.b1"));
    await refused(crewAUser, DEMAND, "intent.m.crew-b.x", () => a.demand.put("intent.m.crew-b.x", json({})));
    await refused(crewAUser, DEMAND, "sel.crew-b.c.a", () => a.demand.put("sel.crew-b.c.a", json({})));
    await refused(crewAUser, DEMAND, "use.m.crew-b", () => a.demand.put("use.m.crew-b", json({})));
    expect(await op.demand.get("wait.m.crew-b.x")).toBeNull();
    expect((await op.demand.get("wait.m.crew-b.b1"))?.operation).toBe("PUT");
    expect(await op.demand.get("sel.crew-b.c.a")).toBeNull();
    expect(await op.demand.get("use.m.crew-b")).toBeNull();
  });

  it("the server refuses sidecar users provider state, and the operator's user tickets and demand", async () => {
    await refused(crewAUser, STATE, "gpu-1", () => a.state.put("gpu-1", json({ endpoint: "http://evil:1" })));
    await refused(crewBUser, STATE, "gpu-1", () => b.state.delete("gpu-1"));
    expect((await op.state.get("gpu-1"))?.json()).toEqual({ name: "gpu-1", endpoint: "http://gpu-1:11434" });
    const ticket = `t.gpu-1.crew-a.${id()}`;
    await refused(operatorUser, TICKETS, ticket, () => op.tickets.put(ticket, json({})));
    await refused(operatorUser, DEMAND, "use.m.crew-a", () => op.demand.put("use.m.crew-a", json({})));
  });

  it("a sidecar user reads all three buckets, any namespace's keys included", async () => {
    const before = nats.log().length;
    expect((await a.state.get("gpu-1"))?.json()).toMatchObject({ endpoint: "http://gpu-1:11434" });
    const theirs = `t.gpu-1.crew-b.${id()}`;
    await b.tickets.put(theirs, json({ provider: "gpu-1" }));
    expect((await a.tickets.get(theirs))?.json()).toEqual({ provider: "gpu-1" });
    expect((await a.demand.get("wait.m.crew-b.b1"))?.operation).toBe("PUT");
    expect((await a.demand.status()).values).toBeGreaterThan(0);
    expect(nats.log().slice(before)).not.toMatch(/Violation/);
  });

  it("every user watches each bucket through an ordered pull consumer (last values, then updates)", async () => {
    const before = nats.log().length;
    const watch = async (s: Session, bucket: string, filter: string, until: (keys: string[]) => boolean) => {
      const consumer = await s.js.consumers.get(`KV_${bucket}`, {
        filter_subjects: `$KV.${bucket}.${filter}`,
        deliver_policy: DeliverPolicy.LastPerSubject,
      });
      const messages = await consumer.consume({ max_messages: 256 });
      const keys: string[] = [];
      const done = (async () => {
        for await (const m of messages) {
          keys.push(m.subject.slice(`$KV.${bucket}.`.length));
          if (until(keys)) break;
        }
      })();
      return { keys, done, stop: () => messages.stop() };
    };
    const later = `t.gpu-1.crew-b.${id()}`;
    const tickets = await watch(a, TICKETS, "t.gpu-1.>", (k) => k.includes(later));
    const state = await watch(b, STATE, ">", (k) => k.includes("gpu-1"));
    const demand = await watch(op, DEMAND, "wait.m.>", (k) => k.includes("wait.m.crew-b.b1"));
    // An update written after the consumer exists reaches it too.
    await b.tickets.put(later, json({ provider: "gpu-1" }));
    await Promise.race([
      Promise.all([tickets.done, state.done, demand.done]),
      new Promise((_, reject) => setTimeout(() => reject(new Error("watches did not deliver")), 10_000)),
    ]).finally(() => {
      for (const w of [tickets, state, demand]) w.stop();
    });
    expect(tickets.keys).toContain(later);
    expect(tickets.keys.every((k) => k.startsWith("t.gpu-1."))).toBe(true);
    expect(state.keys).toContain("gpu-1");
    expect(demand.keys).toContain("wait.m.crew-b.b1");
    // Creating and pulling needed nothing the chart does not grant (a refused consumer delete,
    // when a stopped consumer is cleaned up, is allowed to happen and harmless).
    const refusedSubjects = [
      ...nats
        .log()
        .slice(before)
        .matchAll(/Publish Violation - .*Subject "([^"]+)"/g),
    ].map((m) => m[1]!);
    expect(refusedSubjects.filter((s) => !s.startsWith("$JS.API.CONSUMER.DELETE.KV_"))).toEqual([]);
  });
});
