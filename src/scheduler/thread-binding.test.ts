// A thread's published binding, as Place, Commit and Attribute use it (docs/rules/binding.md
// §9), on a real Scheduler over the in-memory store. The link stands in for the sidecar's
// watched copy of the bucket (sidecar/discussions.ts, tested end to end with NATS in
// test/discussions/rebind.test.ts): here it is a map the test fills.
import { afterEach, expect, it } from "vitest";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { MemoryKvStore, openStateStore, type StateStore } from "../state/index.js";
import { schedulerConfigFromEnv } from "./config.js";
import { type PlaceInput, Scheduler } from "./scheduler.js";
import type { DiscussionLink, ThreadBinding } from "./types.js";

let store: StateStore | undefined;
let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.close();
  await store?.close();
});

const input = (over: Partial<PlaceInput> = {}): PlaceInput => ({
  agent: "team/a",
  threadId: "t1",
  phase: "mulling",
  candidates: [],
  promptTokens: 100,
  promptChars: 0,
  maxOutputTokens: 0,
  cannotWait: false,
  ...over,
});

async function setup(bindings: Map<string, ThreadBinding>) {
  store = await openStateStore(new MemoryKvStore(), { holderId: "test" });
  await store.providerWriter.publish(
    providerState("gpu", {
      endpoint: "http://127.0.0.1:9",
      maxParallel: 4,
      loadedModelFootprintsMiB: { "qwen3:8b": 4863, "qwen3:14b": 9000 },
      availableModelFootprintsMiB: { "qwen3:8b": 4863, "qwen3:14b": 9000 },
    }),
  );
  const asked: string[] = [];
  const link: DiscussionLink = {
    binding: (agent, threadId, phase) => {
      asked.push(`${agent} ${threadId} ${phase}`);
      return bindings.get(`${threadId}.${phase}`);
    },
    opened: () => undefined,
    closed: () => undefined,
  };
  scheduler = new Scheduler({
    state: store,
    config: schedulerConfigFromEnv({
      KUBEMOOT_NAMESPACE: "team",
      KUBEMOOT_AGENT_NAME: "a",
      KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:8b","score":10}]',
    }),
    ops: { unload: async () => {}, load: async () => {} },
    discussions: link,
  });
  return { s: scheduler, asked };
}

it("a call without candidates takes its thread's binding and names its revision, through Attribute too", async () => {
  const { s, asked } = await setup(
    new Map([
      ["t1.mulling", { kind: "binding", revision: 7, candidates: [{ model: "qwen3:14b", score: 90 }] }],
    ]),
  );
  const out = await s.place(input());
  expect(out.kind).toBe("placed");
  if (out.kind !== "placed") return;
  expect(out.placement).toMatchObject({ model: "qwen3:14b", bindingRevision: 7 });
  expect(s.attribute(out.placement.ticketId)?.bindingRevision).toBe(7);
  expect(asked).toEqual(["team/a t1 mulling"]);
});

it("a call with candidates of its own, or of a thread with no binding, names no revision", async () => {
  const { s } = await setup(
    new Map([
      ["t1.mulling", { kind: "binding", revision: 7, candidates: [{ model: "qwen3:14b", score: 90 }] }],
    ]),
  );
  const own = await s.place(input({ candidates: [{ model: "qwen3:8b", score: 1 }] }));
  const unbound = await s.place(input({ threadId: "t2" }));
  for (const out of [own, unbound]) {
    expect(out.kind).toBe("placed");
    if (out.kind !== "placed") continue;
    expect(out.placement.model).toBe("qwen3:8b");
    expect(out.placement.bindingRevision ?? 0).toBe(0);
    expect(s.attribute(out.placement.ticketId)?.bindingRevision).toBe(0);
  }
});

it("a thread whose phase is unschedulable is refused at once with the binder's reason; its own candidates still place", async () => {
  const reason = "no feasible Model for require selectors {params: 70B}: 2 insufficient VRAM";
  const { s } = await setup(new Map([["t1.mulling", { kind: "unschedulable", revision: 3, reason }]]));
  for (const out of [await s.place(input()), await s.commit({ ...input(), crew: "" })]) {
    expect(out.kind).toBe("refused");
    if (out.kind !== "refused") continue;
    expect(out.refusal).toMatchObject({ reason: "unschedulable", waitable: false, bindingRevision: 3 });
    expect(out.refusal.message).toContain(reason);
    expect(out.refusal.message).toContain("t1");
  }
  expect(s.activeTickets).toBe(0);
  const own = await s.place(input({ candidates: [{ model: "qwen3:8b", score: 1 }] }));
  expect(own.kind).toBe("placed");
});

it("the proxy's revision (candidates resolved by the caller) is carried to the placement", async () => {
  const { s } = await setup(new Map());
  const out = await s.place(input({ candidates: [{ model: "qwen3:8b", score: 1 }], bindingRevision: 4 }));
  expect(out.kind === "placed" && out.placement.bindingRevision).toBe(4);
});
