// Provider states followed per candidate (docs/rules/state.md §2.1, §10.1), with real parts: a
// nats-server, a sidecar process, and a fleet writer publishing provider states through the
// state layer's writer (the operator's path), read by a grpc-js client loaded from the .proto.
// The sidecar receives no provider-state update (nor ticket) of a provider that offers none of
// its candidates, however often it changes, and places on a provider as soon as it offers one; its
// proxy's model lists and unknown-model check still cover the whole fleet.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import {
  type Json,
  releaseSucceeded,
  type SchedulerClient,
  schedulerClient,
} from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { providerState } from "../helpers/state-fixtures.js";
import { waitUntil } from "../helpers/wait-until.js";

const CANDIDATE = "m-a";
const OTHERS = ["gpu-1", "gpu-2", "rack.gpu-3"];

let nats: NatsServer;
let fleet: StateStore;
let sidecar: SidecarProcess;
let client: SchedulerClient;

/** The sidecar's own count of the entries its watches of `bucket` delivered. */
async function entries(bucket = "kubemoot_provider_state"): Promise<number> {
  const text = await (await fetch(`${sidecar.apiUrl}/metrics`)).text();
  const m = new RegExp(`^kubemoot_state_watch_entries_total\\{bucket="${bucket}"\\} (\\d+)$`, "m").exec(text);
  if (m === null) throw new Error(`no ${bucket} watch counter in:\n${text}`);
  return Number(m[1]);
}

/** A state whose activeCount moved (what an engine's probe publishes at every call). */
function busy(
  name: string,
  active: number,
  models: Record<string, number>,
  loaded: Record<string, number> = {},
) {
  return providerState(name, {
    totalVramMiB: 81920,
    maxParallel: 8,
    activeCount: active,
    availableModelFootprintsMiB: models,
    loadedModelFootprintsMiB: loaded,
  });
}

async function tagNames(): Promise<string[]> {
  const tags = (await (await fetch(`http://${sidecar.proxyAddress}/api/tags`)).json()) as {
    models: { name: string }[];
  };
  return tags.models.map((m) => m.name).sort();
}

async function place(): Promise<Json> {
  return client.call("Place", { agent: "crew/a1", candidates: [{ model: CANDIDATE, score: 50 }] });
}

async function release(p: Json): Promise<void> {
  expect((await releaseSucceeded(client, p)).released).toBe(true);
}

beforeAll(async () => {
  nats = await NatsServer.start();
  fleet = await openStateStore(nats.url, { holderId: "fleet/writer" });
  await fleet.providerWriter.publish(busy("gpu-0", 0, { [CANDIDATE]: 4000 }));
  for (const p of OTHERS) await fleet.providerWriter.publish(busy(p, 0, { "m-x": 4000 }));
  sidecar = await startSidecarProcess([
    "--nats",
    nats.url,
    "--agent",
    "crew/a1",
    "--proxy-listen",
    "127.0.0.1:0",
  ]);
  client = schedulerClient(sidecar.apiAddress);
}, 60_000);

afterAll(async () => {
  client?.close();
  const code = await sidecar?.stop();
  expect(code, sidecar?.output()).toBe(0);
  await fleet?.close();
  await nats?.dispose();
});

describe("a sidecar following its candidates' provider states", () => {
  it("receives no update of a provider that offers none of its candidates", async () => {
    const first = await place();
    expect(first.result, JSON.stringify(first)).toBe("placement");
    expect(first.placement.provider).toBe("gpu-0");
    await release(first.placement);
    const before = await entries();
    const ticketsBefore = await entries("kubemoot_provider_tickets");
    for (let i = 1; i <= 20; i++) {
      for (const p of OTHERS) await fleet.providerWriter.publish(busy(p, i % 8, { "m-x": 4000 }));
    }
    // Their tickets do not reach it either.
    for (const p of OTHERS) {
      const r = await fleet.tickets.claim({ provider: p, model: "m-x", modelFootprintMiB: 4000 });
      expect(r.ok).toBe(true);
      if (r.ok) await fleet.tickets.release(r.ticket);
    }
    // A sentinel after them: once the sidecar has it, it would have had the others too.
    await fleet.providerWriter.publish(busy("gpu-0", 1, { [CANDIDATE]: 4000 }));
    await waitUntil(async () => (await entries()) > before, 5000);
    expect(await entries()).toBe(before + 1);
    expect(await entries("kubemoot_provider_tickets")).toBe(ticketsBefore);
  });

  it("places on a provider as soon as it offers a candidate", async () => {
    // gpu-0 goes away and gpu-2 starts offering the candidate: only gpu-2 can serve it now.
    await fleet.providerWriter.publish({ ...busy("gpu-0", 0, { [CANDIDATE]: 4000 }), ready: false });
    await fleet.providerWriter.publish(busy("gpu-2", 0, { "m-x": 4000, [CANDIDATE]: 4000 }));
    await waitUntil(async () => {
      const r = await place();
      if (r.result === "placement") await release(r.placement);
      return r.result === "placement" && r.placement.provider === "gpu-2";
    }, 5000);
  });

  it("lists every provider's models through its proxy, and refuses only models no one has", async () => {
    // m-z (named with its tag, as Ollama lists it) is offered by rack.gpu-3 alone, which offers
    // none of the sidecar's candidates.
    await fleet.providerWriter.publish(busy("rack.gpu-3", 0, { "m-x": 4000, "m-z:latest": 4000 }));
    await waitUntil(async () => (await tagNames()).includes("m-z:latest"), 5000);
    expect(await tagNames()).toEqual([CANDIDATE, "m-x", "m-z:latest"]);
    const chat = (model: string) =>
      fetch(`http://${sidecar.proxyAddress}/api/chat`, {
        method: "POST",
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
      });
    const absent = await chat("nobody-has-it");
    expect(absent.status).toBe(404);
    expect(absent.headers.get("x-kubemoot-reason")).toBe("model-not-found");
    // Known fleet-wide, so placed (its made-up endpoint then fails): not refused as unknown.
    const known = await chat("m-z");
    expect(known.headers.get("x-kubemoot-reason")).not.toBe("model-not-found");
  });
});
