// Demand followed per model on a real nats-server (docs/rules/state.md §10.2): a store that
// follows its candidates receives the waits, intents and use rates of the models its decisions
// weigh (the candidates, and the models resident on the providers it follows, whose demand
// prices evicting them), the selection rates, and nothing of any other model; a model that
// becomes a candidate is followed from its first read on; a thread's intents are cleared
// whatever model they name.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentHolderId, openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";
import { waitUntil } from "../helpers/wait-until.js";

const DEMAND = "kubemoot_model_demand";

describe("a store following its candidates' demand", () => {
  let server: NatsServer;
  let fleet: StateStore;
  let sidecar: StateStore;

  beforeAll(async () => {
    server = await NatsServer.start();
    fleet = await openStateStore(server.url, { holderId: agentHolderId("other/x", 1) });
    // gpu-0 offers the candidate m-a and has m-r resident; gpu-1 offers m-b with m-q resident.
    await fleet.providerWriter.publish(
      providerState("gpu-0", {
        totalVramMiB: 81920,
        availableModelFootprintsMiB: { "m-a": 1000, "m-r": 1000 },
        loadedModelFootprintsMiB: { "m-r": 1000 },
      }),
    );
    await fleet.providerWriter.publish(
      providerState("gpu-1", {
        totalVramMiB: 81920,
        availableModelFootprintsMiB: { "m-b": 1000, "m-q": 1000 },
        loadedModelFootprintsMiB: { "m-q": 1000 },
      }),
    );
    sidecar = await openStateStore(server.url, {
      holderId: agentHolderId("crew/a1", 2),
      ticketsScope: "candidates",
    });
    // Both offers are in (docs/rules/state.md §2.1): what the sidecar follows is its own choice.
    await waitUntil(() => sidecar.providers.offeredModels().size === 4);
  });

  afterAll(async () => {
    await sidecar?.close();
    await fleet?.close();
    await server?.dispose();
  });

  /** A decision among `models`, as placement reads it: tickets first, then demand. */
  async function read(models: string[]) {
    await sidecar.tickets.everything(models);
    return sidecar.demand.snapshot(models);
  }
  const modelsOf = (s: Awaited<ReturnType<typeof read>>) =>
    new Set(s.entries.flatMap((e) => (e.kind === "sel" || e.kind === "svc" ? [] : [e.model])));

  it("receives the demand of its candidates and of the models resident where they run, no other", async () => {
    await read(["m-a"]);
    await read(["m-a"]); // the residents of the providers the first read started following
    expect(sidecar.stats.followedModels()).toBe(2);
    const before = sidecar.stats.watchEntries[DEMAND]!;
    await fleet.demand.putWait("m-a", "other/w1");
    await fleet.demand.putWait("m-r", "other/w2");
    await fleet.demand.putWait("m-b", "other/w3");
    await fleet.demand.recordSelection("other/crew", "other/w1", ["m-b"]);
    for (let i = 0; i < 40; i++) await fleet.demand.recordUse("m-b", "other/w3");
    for (let i = 0; i < 10; i++) await fleet.demand.recordUse("m-q", "other/w4");
    await waitUntil(async () => {
      const m = modelsOf(await read(["m-a"]));
      return m.has("m-a") && m.has("m-r");
    });
    // Give the watches time to deliver anything else before counting.
    await new Promise((r) => setTimeout(r, 300));
    const s = await read(["m-a"]);
    expect([...modelsOf(s)].sort()).toEqual(["m-a", "m-r"]);
    expect(s.sel).toHaveLength(1);
    // Two waits and one selection rate, not the 53 entries the fleet wrote.
    expect(sidecar.stats.watchEntries[DEMAND]! - before).toBe(3);
  });

  it("follows a model from the first decision that weighs it", async () => {
    const s = await read(["m-b"]);
    expect(modelsOf(s).has("m-b")).toBe(true);
    expect(s.use.find((u) => u.model === "m-b")?.rate).toBeCloseTo(40, 1);
    // gpu-1 is followed now, so its resident m-q is too.
    const t = await read(["m-b"]);
    expect(t.use.find((u) => u.model === "m-q")?.rate).toBeCloseTo(10, 1);
  });

  it("clears a thread's intents for models it did not follow before", async () => {
    await sidecar.demand.putIntents("crew/a1", "t1", ["m-z", "m-a"]);
    expect(await sidecar.demand.clearThread("t1")).toBe(2);
    const all = await fleet.demand.snapshot();
    expect(all.intent.filter((e) => e.thread === "t1")).toEqual([]);
  });

  it("the kubemoot layout has no per-model filter: its store follows the whole bucket", async () => {
    const whole = await openStateStore(server.url, {
      holderId: agentHolderId("crew/a3", 3),
      keyLayout: "kubemoot",
      ticketsScope: "candidates",
    });
    try {
      await whole.tickets.everything(["m-a"]);
      await whole.demand.snapshot(["m-a"]);
      expect(whole.stats.followedModels()).toBe(0);
    } finally {
      await whole.close();
    }
  });
});
