// Issue 17, identity: a sidecar acts for its own agent, on its own agent's tickets. Three real
// sidecar processes over time on one real nats-server, an emulated GPU, grpc-js clients.
// - Agent B's sidecar cannot release agent A's live ticket (released: false, the ticket stays),
//   cannot renew or attribute it (NOT_FOUND), cannot place as A (PERMISSION_DENIED, also through
//   its proxy: 403); A's Renew still succeeds afterwards.
// - B records a selection only for a crew of its own namespace (PERMISSION_DENIED otherwise).
// - A restarted A sidecar (same agent, new process) releases its predecessor's ticket.
// - Raw bytes that are no request answer INVALID_ARGUMENT on Connect binary and gRPC, and a
//   1 MiB agent leaves the connection serving.
import { create, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { PlaceRequestSchema } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { type Json, type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { frame, grpcStatus, h2Request } from "../helpers/raw-http2.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

let nats: NatsServer;
let store: StateStore;
let publisher: ProviderPublisher;
let gpu: EmulatorHandle;
const sidecars: SidecarProcess[] = [];
const clients: SchedulerClient[] = [];
const cands = [{ model: "qwen3:8b", score: 50 }];

async function sidecar(agent: string): Promise<{ proc: SidecarProcess; api: SchedulerClient }> {
  const proc = await startSidecarProcess([
    "--nats",
    nats.url,
    "--agent",
    agent,
    "--proxy-listen",
    "127.0.0.1:0",
  ]);
  sidecars.push(proc);
  const api = schedulerClient(proc.apiAddress);
  clients.push(api);
  return { proc, api };
}

async function ticketIds(): Promise<string[]> {
  const all = await store.tickets.allTickets();
  return [...all.values()].flat().map((t) => t.ticketId);
}

/** The gRPC error of a call that must fail (grpc-js leaves ":" percent-encoded). */
async function failure(p: Promise<unknown>): Promise<{ code: grpc.status; details: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as grpc.ServiceError;
    return { code: e.code, details: decodeURIComponent(e.details) };
  }
  throw new Error("the call succeeded");
}

let a: { proc: SidecarProcess; api: SchedulerClient };
let b: { proc: SidecarProcess; api: SchedulerClient };

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  gpu = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { "qwen3:8b": 4863 },
    contextLength: 8192,
    timeScale: 0.01,
  });
  publisher = new ProviderPublisher({ sink: store.providerWriter, intervalMs: 60_000 });
  publisher.start();
  await publisher.setProviders([
    { name: "gpu", endpoint: gpu.url, totalVramMiB: 24563, maxParallel: 4, contextLength: 8192 },
  ]);
  await (await fetch(`${gpu.url}/api/generate`, { method: "POST", body: '{"model":"qwen3:8b"}' })).text();
  await publisher.probeNow();
  a = await sidecar("crew/a");
  b = await sidecar("crew/b");
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of sidecars) await s.stop("SIGKILL");
  await publisher?.stop();
  await gpu?.close();
  await store?.close();
  await nats?.dispose();
});

describe("two agents' sidecars on one NATS", () => {
  let ticket: Json;

  it("B cannot release, renew or attribute A's live ticket; A renews it afterwards", async () => {
    const placed = await a.api.call("Place", { candidates: cands, promptTokens: 100 });
    expect(placed.result).toBe("placement");
    ticket = placed.placement;
    expect(await ticketIds()).toContain(ticket.ticketId);

    expect(await b.api.call("Release", { ticketId: ticket.ticketId })).toEqual({ released: false });
    expect(await ticketIds()).toContain(ticket.ticketId);
    expect((await failure(b.api.call("Renew", { ticketId: ticket.ticketId }))).code).toBe(
      grpc.status.NOT_FOUND,
    );
    expect((await failure(b.api.call("Attribute", { ticketId: ticket.ticketId }))).code).toBe(
      grpc.status.NOT_FOUND,
    );

    const renewed = await a.api.call("Renew", { ticketId: ticket.ticketId, extendSeconds: "60" });
    expect(Number(renewed.expiresAt.seconds)).toBeGreaterThan(0);
    expect((await a.api.call("Attribute", { ticketId: ticket.ticketId })).ticketId).toBe(ticket.ticketId);
  });

  it("B cannot place, wait, commit or end a thread as A: PERMISSION_DENIED naming both agents", async () => {
    for (const [method, call] of [
      ["Place", b.api.call("Place", { agent: "crew/a", candidates: cands })],
      ["Wait", b.api.stream("Wait", { agent: "crew/a", candidates: cands }).done],
      ["Commit", b.api.call("Commit", { agent: "crew/a", threadId: "t", candidates: cands })],
      ["EndThread", b.api.call("EndThread", { agent: "crew/a", threadId: "t" })],
    ] as const) {
      const err = await failure(call);
      expect({ method, code: err.code }).toEqual({ method, code: grpc.status.PERMISSION_DENIED });
      expect(err.details).toBe('agent: this sidecar serves "crew/b" only, not "crew/a"');
    }
  });

  it("B records selections only for crews of its own namespace", async () => {
    const selections = async () => (await store.demand.snapshot()).sel.length;
    const before = await selections();
    const err = await failure(
      b.api.call("Commit", { threadId: "t-sel", candidates: cands, crew: "other/team" }),
    );
    expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(err.details).toBe(
      `crew: this sidecar's agent "crew/b" records selections for crews of namespace "crew" only, not "other/team"`,
    );
    expect(await selections()).toBe(before);
    await b.api.call("Commit", { threadId: "t-sel", candidates: cands, crew: "crew/team" });
    expect(await selections()).toBe(before + 1);
    await b.api.call("EndThread", { threadId: "t-sel" });
  });

  it("B's proxy answers 403 for a call naming agent A", async () => {
    const res = await fetch(`http://${b.proc.proxyAddress}/api/generate`, {
      method: "POST",
      headers: { "x-kubemoot-agent": "crew/a" },
      body: JSON.stringify({ model: "qwen3:8b", prompt: "hi", stream: false }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ reason: "forbidden", field: "agent" });
  });

  it("a restarted A sidecar (same agent, new process) releases its predecessor's ticket", async () => {
    await a.proc.stop("SIGKILL");
    expect(await ticketIds()).toContain(ticket.ticketId);
    const again = await sidecar("crew/a");
    expect(await b.api.call("Release", { ticketId: ticket.ticketId })).toEqual({ released: false });
    expect(await again.api.call("Release", { ticketId: ticket.ticketId })).toEqual({ released: true });
    expect(await ticketIds()).not.toContain(ticket.ticketId);
    a = again;
  });
});

describe("malformed and oversized input on the real process", () => {
  const PATH = "/kubemoot.scheduler.v1.SchedulerService";
  const GARBAGE = new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);

  it("raw bytes that are no PlaceRequest: Connect binary HTTP 400 invalid_argument, gRPC INVALID_ARGUMENT", async () => {
    for (const method of ["Place", "Release", "Renew", "Commit", "EndThread", "Attribute"]) {
      const res = await fetch(`${a.proc.apiUrl}${PATH}/${method}`, {
        method: "POST",
        headers: { "content-type": "application/proto" },
        body: GARBAGE,
      });
      expect({ method, status: res.status }).toEqual({ method, status: 400 });
      expect(await res.json()).toMatchObject({ code: "invalid_argument" });
    }
    const r = await h2Request(
      a.proc.apiAddress,
      { ":path": `${PATH}/Place`, "content-type": "application/grpc", te: "trailers" },
      frame(GARBAGE),
    );
    expect(grpcStatus(r).code).toBe(grpc.status.INVALID_ARGUMENT);
    // A well-formed binary request on the same port still works.
    const ok = await fetch(`${a.proc.apiUrl}${PATH}/Place`, {
      method: "POST",
      headers: { "content-type": "application/proto" },
      body: toBinary(PlaceRequestSchema, create(PlaceRequestSchema, { candidates: cands })),
    });
    expect(ok.status).toBe(200);
  });

  it("a 1 MiB agent: a short INVALID_ARGUMENT, and the same connection keeps serving", async () => {
    const err = await failure(
      a.api.call("Place", { agent: `crew/${"x".repeat(1 << 20)}`, candidates: cands }),
    );
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details.length).toBeLessThan(300);
    const placed = await a.api.call("Place", { candidates: cands });
    expect(placed.result).toBe("placement");
    expect(await a.api.call("Release", { ticketId: placed.placement.ticketId })).toEqual({ released: true });
  });
});
