// A sidecar's decision records as scheduler hooks (docs/web-view.md "Decision records"): one
// record per placement with the options the time policy weighed, one per refused call however
// often it is retried, one per released call with its attribution; sampled, published on the
// agent's namespace subject, never prompt text, and never a throw into the call.
import { describe, expect, it } from "vitest";
import { provider, RTX_4090_MIB, RTX_5090_MIB, snapshot, T0 } from "../../test/helpers/core-fixtures.js";
import { ManualClock } from "../../test/helpers/state-fixtures.js";
import { explainPlan, indexSnapshot, type PlanRequest, plan } from "../core/index.js";
import type {
  AttributionOut,
  PlaceInput,
  PlacementOut,
  RefusalOut,
  SchedulerHooks,
} from "../scheduler/index.js";
import type { MessageBus } from "../state/index.js";
import { type DecisionPublisherOptions, decisionHooks } from "./decision-publisher.js";
import { decodeRecord } from "./decision-record.js";
import type { DecisionRecord } from "./view-types.js";

const Q8 = "qwen3:8b";
const Q14 = "qwen3:14b";
const DISK = { [Q8]: 5979 / 1.2, [Q14]: 12224 / 1.2 };
/** Text that stands for a prompt: it is in the call's input, and must be in no record. */
const PROMPT = "PROMPT-TEXT: summarise the board minutes";

/** Test double of MessageBus: records every publish, delivers nothing. */
class RecordingBus implements MessageBus {
  readonly sent: { subject: string; data: Uint8Array }[] = [];
  publish(subject: string, data: Uint8Array): void {
    this.sent.push({ subject, data: data.slice() });
  }
  subscribe(): () => void {
    return () => undefined;
  }
  records(): DecisionRecord[] {
    return this.sent.map((m) => JSON.parse(new TextDecoder().decode(m.data)) as DecisionRecord);
  }
}

function setup(over: Partial<DecisionPublisherOptions> = {}) {
  const bus = new RecordingBus();
  const clock = new ManualClock(T0);
  const hooks = decisionHooks({
    bus,
    instance: "team-a/planner@4242",
    policy: "time",
    ratePerS: 10,
    crewOf: (agent) => `crew-of-${agent.split("/")[0]}`,
    defaultAgent: "default-ns/sidecar",
    attributionJson: (a) => ({
      ticketId: a.ticketId,
      promptTokens: String(a.promptTokens),
      coldLoad: a.coldLoad,
    }),
    now: clock.now,
    ...over,
  });
  return { bus, clock, hooks };
}

const s = snapshot({
  providers: [
    provider("rtx-5090", {
      totalVramMiB: RTX_5090_MIB,
      availableModelFootprintsMiB: DISK,
      loadedModelFootprintsMiB: { [Q8]: 5979 },
    }),
    provider("rtx-4090", { totalVramMiB: RTX_4090_MIB, availableModelFootprintsMiB: DISK }),
    provider("rtx-3090", { totalVramMiB: RTX_4090_MIB, availableModelFootprintsMiB: DISK }),
  ],
});
const index = indexSnapshot(s, { policy: "time" });
const request: PlanRequest = {
  candidates: [
    { model: Q14, score: 90 },
    { model: Q8, score: 85 },
  ],
  promptTokens: 900,
  conversationKey: PROMPT,
};

function input(agent = "team-a/planner"): PlaceInput {
  return {
    agent,
    threadId: `${PROMPT} (thread)`,
    phase: "mulling",
    candidates: [...request.candidates],
    promptTokens: 900,
    promptChars: 3600,
    maxOutputTokens: 512,
    cannotWait: false,
    conversation: {
      id: `${PROMPT} (conversation)`,
      marks: { hashes: [PROMPT, `${PROMPT} 2`], chars: [1800, 3600], assistant: [false, true] },
      promptChars: 3600,
    },
  };
}

function decide(hooks: SchedulerHooks, inp: PlaceInput) {
  const decision = plan(index, request);
  hooks.onDecision!({ input: inp, snapshot: s, index, request, decision, decideMs: 0.4 });
  return decision;
}

const where = { ticketId: "ticket-1", provider: "rtx-4090", endpoint: "http://10.1.2.3:11434", model: Q14 };
const placement: PlacementOut = {
  ...where,
  ...{ coldLoad: true, evicted: ["gemma3:4b"], footprintMiB: 12224, contextLength: 8192 },
  ...{ expiresAtMs: T0 + 150_000, fromPlan: false, staticFallback: false, engine: "ollama" },
  ...{ expectedCachedTokens: 0, priority: "interactive", queuePosition: 2, bindingRevision: 5 },
};

const refusal = (over: Partial<RefusalOut> = {}): RefusalOut => ({
  ...{ reason: "gpu-busy", model: Q14, message: "every copy of qwen3:14b is busy" },
  ...{ largestContext: 8192, waitable: true, promptTokens: 900 },
  ...over,
});

const attribution: AttributionOut = {
  ...where,
  ...{ agent: "team-a/planner", evicted: ["gemma3:4b"], coldLoad: true, queueWaitMs: 1500.4 },
  ...{ placedAtMs: T0, releasedAtMs: T0 + 9000, latencyMs: 9000, estimatedPromptTokens: 900 },
  ...{ promptTokens: 1200, cachedPromptTokens: 0, expectedCachedPromptTokens: 0, prefillSavedMs: 0 },
  ...{ truncated: false, success: true, outcome: "succeeded", error: "", fromPlan: false },
  ...{ engine: "ollama", priority: "interactive", queuePosition: 2, bindingRevision: 0 },
};

/** A placement of `placement` reported for `inp`, as the scheduler reports it. */
const place = (h: SchedulerHooks, inp = input(), queueWaitMs = 0) =>
  h.onPlace!({ kind: "placed", placement }, undefined, 1, inp, queueWaitMs);

describe("decisionHooks", () => {
  it("publishes a placement on the agent's namespace, with the options the policy weighed", () => {
    const { bus, clock, hooks } = setup();
    const inp = input();
    const decision = decide(hooks, inp);
    clock.advance(1500);
    hooks.onPlace!({ kind: "placed", placement }, decision, 3.2, inp, 1234.6);
    expect(bus.sent.map((m) => m.subject)).toEqual(["kubemoot.decisions.team-a"]);
    const options = explainPlan(index, request, 3);
    // More options were weighed than a record carries: it carries the best three.
    expect(explainPlan(index, request, 10).length).toBeGreaterThan(3);
    expect(options).toHaveLength(3);
    expect(options[0]).toMatchObject({ provider: "rtx-5090" });
    expect(bus.records()).toEqual([
      {
        v: 1,
        id: "ticket-1",
        at: T0 + 1500,
        kind: "placed",
        agent: "team-a/planner",
        crew: "crew-of-team-a",
        instance: "team-a/planner@4242",
        model: Q14,
        provider: "rtx-4090",
        engine: "ollama",
        cold: true,
        evicted: ["gemma3:4b"],
        waitMs: 1235,
        policy: "time",
        options,
        priority: "interactive",
        queuePosition: 2,
        bindingRevision: 5,
        weight: 1,
      },
    ]);
    // What a view reads back is what was sent.
    expect(decodeRecord(bus.sent[0]!.data)).toEqual(bus.records()[0]);
  });

  it("publishes a waiting call's refusal once, however often it is retried", () => {
    const { bus, clock, hooks } = setup();
    const inp = input("team-b/coder");
    for (let i = 0; i < 4; i++) {
      const decision = decide(hooks, inp);
      const r = refusal({ queuePosition: 3, bindingRevision: 6 });
      hooks.onPlace!({ kind: "refused", refusal: r }, decision, 1, inp, i * 500);
      clock.advance(500);
    }
    expect(bus.records()).toHaveLength(1);
    const [r] = bus.records();
    expect(r).toMatchObject({
      kind: "refused",
      agent: "team-b/coder",
      crew: "crew-of-team-b",
      model: Q14,
      reason: "gpu-busy",
      message: "every copy of qwen3:14b is busy",
      waitMs: 0,
      queuePosition: 3,
      bindingRevision: 6,
      weight: 1,
      options: explainPlan(index, request, 3),
    });
    expect(bus.sent[0]!.subject).toBe("kubemoot.decisions.team-b");
    expect(r!.id).toMatch(/^[0-9a-f-]{36}$/);
    // Another call's refusal is its own record; the waiting call's placement is recorded too.
    const other = input("team-b/coder");
    hooks.onPlace!({ kind: "refused", refusal: refusal() }, undefined, 1, other, 0);
    place(hooks, inp, 2000);
    expect(bus.records().map((x) => x.kind)).toEqual(["refused", "refused", "placed"]);
    expect(bus.records()[1]).not.toHaveProperty("options");
    expect(bus.records()[2]!.options).toEqual(explainPlan(index, request, 3));
  });

  it("cuts a refusal's message", () => {
    const { bus, hooks } = setup();
    const long = refusal({ message: "x".repeat(5000) });
    hooks.onPlace!({ kind: "refused", refusal: long }, undefined, 1, input(), 0);
    expect(bus.records()[0]!.message).toHaveLength(240);
  });

  it("publishes a released call with the attribution attributionJson gives", () => {
    const { bus, hooks } = setup();
    hooks.onRelease!(attribution);
    expect(bus.sent.map((m) => m.subject)).toEqual(["kubemoot.decisions.team-a"]);
    expect(bus.records()[0]).toEqual({
      v: 1,
      id: "ticket-1",
      at: T0,
      kind: "released",
      agent: "team-a/planner",
      crew: "crew-of-team-a",
      instance: "team-a/planner@4242",
      model: Q14,
      provider: "rtx-4090",
      engine: "ollama",
      cold: true,
      evicted: ["gemma3:4b"],
      waitMs: 1500,
      policy: "time",
      attribution: { ticketId: "ticket-1", promptTokens: "1200", coldLoad: true },
      weight: 1,
    });
  });

  it("names the default agent for a call that names none", () => {
    const { bus, hooks } = setup();
    hooks.onRelease!({ ...attribution, agent: "" });
    expect(bus.sent[0]!.subject).toBe("kubemoot.decisions.default-ns");
    expect(bus.records()[0]).toMatchObject({ agent: "default-ns/sidecar", crew: "crew-of-default-ns" });
  });

  it("samples at the rate, the next record carrying the skipped ones", () => {
    const { bus, clock, hooks } = setup({ ratePerS: 2 });
    for (let i = 0; i < 5; i++) place(hooks);
    expect(bus.records().map((r) => r.weight)).toEqual([1, 1]);
    clock.advance(1000);
    place(hooks);
    expect(bus.records().map((r) => r.weight)).toEqual([1, 1, 4]);
  });

  it("has no hooks at rate 0", () => {
    const { bus, hooks } = setup({ ratePerS: 0 });
    expect(hooks).toEqual({});
    expect(bus.sent).toEqual([]);
  });

  it("never throws into the call", () => {
    const { bus, hooks } = setup({
      attributionJson: () => {
        throw new Error("proto JSON failed");
      },
    });
    expect(() => hooks.onRelease!(attribution)).not.toThrow();
    expect(bus.sent).toEqual([]);
    const crewless = setup({
      crewOf: () => {
        throw new Error("no crew");
      },
    });
    expect(() => place(crewless.hooks)).not.toThrow();
    expect(crewless.bus.sent).toEqual([]);
    const busless = setup();
    busless.bus.publish = () => {
      throw new Error("bus is away");
    };
    expect(() => place(busless.hooks)).not.toThrow();
    expect(() => busless.hooks.onRelease!(attribution)).not.toThrow();
  });

  it("publishes no prompt text", () => {
    const { bus, clock, hooks } = setup();
    const waiting = input();
    hooks.onPlace!({ kind: "refused", refusal: refusal() }, decide(hooks, waiting), 1, waiting, 0);
    clock.advance(2000);
    hooks.onPlace!({ kind: "placed", placement }, decide(hooks, waiting), 1, waiting, 2000);
    hooks.onRelease!(attribution);
    expect(bus.sent).toHaveLength(3);
    const all = bus.sent.map((m) => new TextDecoder().decode(m.data)).join("\n");
    expect(all).not.toContain("PROMPT-TEXT");
    expect(all).not.toContain("10.1.2.3");
    expect(all).toContain("ticket-1");
  });
});
