// The SchedulerService as agents call it: a real API server over a real Scheduler on the
// in-memory store, called with grpc-js (not our server's library) and fetch (Connect JSON).
// - Identity: a sidecar started for an agent acts for that agent only (PERMISSION_DENIED naming
//   the field and both agents); an empty agent is its own; without one it serves every agent.
// - Bounded, printable input: every string field has a limit, errors quote at most a short
//   printable prefix of the input (a 1 MiB agent once tore the HTTP/2 connection down), the
//   tolerance is checked.
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_QUOTED_CHARS } from "../../src/errors/index.js";
import { Scheduler, schedulerConfigFromEnv } from "../../src/scheduler/index.js";
import { MemoryKvStore, openStateStore, type StateStore } from "../../src/state/index.js";
import { type Json, type SchedulerClient, schedulerClient } from "../../test/helpers/grpc-client.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { type ApiServer, identityInterceptor, startApiServer } from "../api/index.js";
import { schedulerService } from "./service.js";

interface Served {
  api: ApiServer;
  client: SchedulerClient;
  scheduler: Scheduler;
  close(): Promise<void>;
}

const cands = [{ model: "qwen3:8b", score: 50 }];
const kv = new MemoryKvStore();
let store: StateStore;

/** A sidecar's API for `agent` ("" = none configured, as standalone and demo). */
async function serve(agent: string, env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const scheduler = new Scheduler({
    state: store,
    config: schedulerConfigFromEnv(env, agent),
    ops: { unload: async () => {}, load: async () => {} },
  });
  const api = await startApiServer({
    host: "127.0.0.1",
    port: 0,
    impl: schedulerService(scheduler),
    interceptors: [identityInterceptor(agent)],
  });
  const client = schedulerClient(api.address);
  return {
    api,
    client,
    scheduler,
    async close() {
      client.close();
      await scheduler.close();
      await api.close();
    },
  };
}

let own: Served;
let open: Served;

beforeAll(async () => {
  store = await openStateStore(kv);
  await store.providerWriter.publish(
    providerState("gpu", {
      endpoint: "http://127.0.0.1:9",
      maxParallel: 64,
      loadedModelFootprintsMiB: { "qwen3:8b": 4863 },
      availableModelFootprintsMiB: { "qwen3:8b": 4863 },
    }),
  );
  own = await serve("crew/a1");
  open = await serve("");
});
afterAll(async () => {
  await own?.close();
  await open?.close();
  await store?.close();
});

/**
 * The gRPC error of a call that must fail, its message decoded: grpc-js undoes the
 * grpc-message percent-encoding with decodeURI, which leaves ":" and "," encoded.
 */
async function failure(p: Promise<unknown>): Promise<{ code: grpc.status; details: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as grpc.ServiceError;
    return { code: e.code, details: decodeURIComponent(e.details) };
  }
  throw new Error("the call succeeded");
}

async function placeAndRelease(c: SchedulerClient, req: Json): Promise<Json> {
  const r = await c.call("Place", { candidates: cands, ...req });
  expect(r.result).toBe("placement");
  expect(await c.call("Release", { ticketId: r.placement.ticketId })).toEqual({ released: true });
  return r.placement;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f]/;

describe("identity", () => {
  it("Place, Wait, Commit and EndThread for another agent: PERMISSION_DENIED naming the field and both agents", async () => {
    const c = own.client;
    const calls: [string, Promise<unknown>][] = [
      ["Place", c.call("Place", { agent: "crew/b2", candidates: cands })],
      ["Wait", c.stream("Wait", { agent: "crew/b2", candidates: cands }).done],
      ["Commit", c.call("Commit", { agent: "crew/b2", threadId: "t", candidates: cands })],
      ["EndThread", c.call("EndThread", { agent: "crew/b2", threadId: "t" })],
    ];
    for (const [method, call] of calls) {
      const err = await failure(call);
      expect({ method, code: err.code }).toEqual({ method, code: grpc.status.PERMISSION_DENIED });
      expect(err.details).toMatch(/^agent: /);
      expect(err.details).toContain('"crew/a1"');
      expect(err.details).toContain('"crew/b2"');
    }
    // Nothing was held or claimed for the other agent.
    expect(own.scheduler.activeTickets).toBe(0);
  });

  it("Commit records a selection for the agent's own crew only (KUBEMOOT_CREW); without an agent, any", async () => {
    const crewed = await serve("crew/a1", { KUBEMOOT_CREW: "crew/pilot" });
    try {
      const err = await failure(
        crewed.client.call("Commit", { threadId: "t", candidates: cands, crew: "crew/other" }),
      );
      expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(err.details).toBe(
        `crew: this sidecar's agent "crew/a1" records selections for "crew/pilot" only, not "crew/other"`,
      );
      for (const crew of ["crew/pilot", ""]) {
        expect((await crewed.client.call("Commit", { threadId: "t", candidates: cands, crew })).result).toBe(
          "planned",
        );
      }
      await crewed.client.call("EndThread", { threadId: "t" });
    } finally {
      await crewed.close();
    }
    const any = { agent: "x/y", threadId: "t", candidates: cands, crew: "other/team" };
    expect((await open.client.call("Commit", any)).result).toBe("planned");
    await open.client.call("EndThread", { agent: "x/y", threadId: "t" });
  });

  it("over Connect too: HTTP 403 permission_denied", async () => {
    const res = await fetch(`http://${own.api.address}/kubemoot.scheduler.v1.SchedulerService/Place`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent: "crew/b2", candidates: cands }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "permission_denied" });
  });

  it("an empty agent is the sidecar's own; naming its own agent is the same", async () => {
    await placeAndRelease(own.client, {});
    await placeAndRelease(own.client, { agent: "crew/a1" });
    const commit = await own.client.call("Commit", { threadId: "t-own", candidates: cands });
    expect(commit.result).toBe("planned");
    expect(await own.client.call("EndThread", { threadId: "t-own" })).toEqual({ releasedTickets: 1 });
  });

  it("a sidecar without an agent (standalone, demo) serves every agent", async () => {
    await placeAndRelease(open.client, { agent: "crew/b2" });
    await placeAndRelease(open.client, { agent: "other/x" });
  });
});

describe("bounded, printable input", () => {
  it("a 1 MiB agent: INVALID_ARGUMENT with a short message, and the connection keeps serving", async () => {
    const err = await failure(own.client.call("Place", { agent: `crew/${"x".repeat(1 << 20)}` }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^agent: /);
    expect(err.details.length).toBeLessThan(MAX_QUOTED_CHARS + 100);
    await placeAndRelease(own.client, {});
  });

  it("agent over 256 characters, even well-formed: INVALID_ARGUMENT", async () => {
    const err = await failure(
      open.client.call("Place", { agent: `crew/${"a".repeat(252)}`, candidates: cands }),
    );
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^agent: .*256/);
  });

  it.each([
    ["thread_id", "Place", { threadId: "t".repeat(257) }],
    ["candidates[0].model", "Place", { candidates: [{ model: "m".repeat(257), score: 1 }] }],
    ["ticket_id", "Release", { ticketId: "k".repeat(257) }],
    ["ticket_id", "Renew", { ticketId: "k".repeat(257) }],
    ["ticket_id", "Attribute", { ticketId: "k".repeat(257) }],
    ["crew", "Commit", { threadId: "t", crew: `crew/${"c".repeat(300)}` }],
    ["thread_id", "EndThread", { threadId: "t".repeat(257) }],
  ])(
    "%s over its limit on %s: INVALID_ARGUMENT naming it, quoting at most a short prefix",
    async (field, method, req) => {
      const err = await failure(own.client.call(method, req));
      expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details.startsWith(`${field}: `)).toBe(true);
      expect(err.details.length).toBeLessThan(MAX_QUOTED_CHARS + 100);
    },
  );

  it.each([
    ["agent", { agent: "crew/\u001b[31mred\u0007" }],
    ["phase", { phase: "mull\nING\u001b[2J" }],
    ["thread_id", { threadId: "t\u0000\r\n" }],
  ])("control characters in %s: INVALID_ARGUMENT, and the message is printable", async (field, req) => {
    const err = await failure(own.client.call("Place", { candidates: cands, ...req }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details.startsWith(`${field}: `)).toBe(true);
    expect(err.details).not.toMatch(UNPRINTABLE);
  });

  it.each([
    ["-1", /≥ 0/],
    ["4294967296", /at most/],
    ["-9223372036854775808", /≥ 0/],
    ["9223372036854775807", /at most/],
  ])("tolerance %s: INVALID_ARGUMENT naming it", async (tolerance, why) => {
    const err = await failure(own.client.call("Place", { candidates: cands, tolerance }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^tolerance: /);
    expect(err.details).toMatch(why);
    const commit = await failure(own.client.call("Commit", { threadId: "t", candidates: cands, tolerance }));
    expect(commit.details).toMatch(/^tolerance: /);
  });

  it("an unknown priority band: INVALID_ARGUMENT naming priority, on Place and Wait", async () => {
    const err = await failure(own.client.call("Place", { candidates: cands, priority: "urgent" }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toBe('priority: expected one of interactive, standard, batch, got "urgent"');
    const r = await own.client.call("Place", { candidates: cands, priority: "interactive" });
    expect(r.placement?.priority).toBe("interactive");
    await own.client.call("Release", { ticketId: r.placement.ticketId, outcome: "CALL_OUTCOME_SUCCEEDED" });
  });

  it("tolerance 0 and a large one in range are accepted", async () => {
    await placeAndRelease(own.client, { tolerance: "0" });
    await placeAndRelease(own.client, { tolerance: "4294967295" });
  });

  it("a long error text on Release is kept short, and the ticket is released all the same", async () => {
    const r = await own.client.call("Place", { candidates: cands });
    const released = await own.client.call("Release", {
      ticketId: r.placement.ticketId,
      outcome: "CALL_OUTCOME_FAILED",
      error: `boom\u001b[31m${"e".repeat(100_000)}`,
    });
    expect(released).toEqual({ released: true });
    const a = await own.client.call("Attribute", { ticketId: r.placement.ticketId });
    expect(a.error.length).toBeLessThanOrEqual(1024);
    expect(a.error).not.toMatch(UNPRINTABLE);
  });
});

describe("refusal texts", () => {
  it("are printable over the API, the model field as sent", async () => {
    const model = "ghost\u001b[31m\u2028:1b";
    const r = await own.client.call("Place", { candidates: [{ model, score: 1 }] });
    expect(r.result).toBe("refusal");
    expect(r.refusal.model).toBe(model);
    expect(r.refusal.message).toContain("ghost");
    expect(r.refusal.message).not.toMatch(UNPRINTABLE);
    expect(r.refusal.message).not.toContain("\u2028");
  });

  it("are printable even when a model name in the shared state is not (any NATS writer can publish one)", async () => {
    // Too large for any GPU here: the model-too-large text names the model.
    const model = "huge\u001b[2J\u0007:1t";
    await store.providerWriter.publish(
      providerState("gpu-odd", {
        endpoint: "http://127.0.0.1:9",
        availableModelFootprintsMiB: { [model]: 900_000 },
      }),
    );
    const out = await own.scheduler.place({
      agent: "crew/a1",
      threadId: "",
      phase: "mulling",
      candidates: [{ model, score: 1 }],
      promptTokens: 10,
      promptChars: 0,
      maxOutputTokens: 0,
      cannotWait: false,
    });
    expect(out.kind).toBe("refused");
    if (out.kind !== "refused") return;
    expect(out.refusal.reason).toBe("model-too-large");
    expect(out.refusal.message).toContain("huge");
    expect(out.refusal.message).not.toMatch(UNPRINTABLE);
  });
});
