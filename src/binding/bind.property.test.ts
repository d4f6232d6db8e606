import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agent, model, NOW, policy, provider } from "../../test/binding/fixtures.js";
import { bind } from "./bind.js";
import type {
  Agent,
  AgentSchedulingStatus,
  ClusterSnapshot,
  CrewSchedulingPolicy,
  LabelSelector,
  Model,
  ModelProvider,
} from "./types.js";

const PARAMS = ["0.6B", "8B", "14B", "32B"];
const CLASSES = ["low", "medium", "high"];
const PROVIDERS = ["gpu-a", "gpu-b", "cpu"];
const CAPS = ["reasoning", "tool-calling", "observability", "kubernetes"];

const arbSelector: fc.Arbitrary<LabelSelector> = fc.record(
  {
    matchLabels: fc.dictionary(
      fc.constantFrom("family", "latencyClass"),
      fc.constantFrom("qwen3", "low", "high"),
    ),
    matchExpressions: fc.array(
      fc.oneof(
        fc.record({
          key: fc.constant("params"),
          operator: fc.constantFrom("In", "NotIn"),
          values: fc.subarray(PARAMS, { minLength: 1 }),
        }),
        fc.record({
          key: fc.constantFrom("capability/reasoning", "gpu"),
          operator: fc.constantFrom("Exists", "DoesNotExist"),
        }),
        // sometimes invalid: the binder must report it, never throw
        fc.record({
          key: fc.constant("params"),
          operator: fc.constantFrom("Gt", "In"),
          values: fc.constant([]),
        }),
      ),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: [] },
);

const arbModel: fc.Arbitrary<Model> = fc
  .record({
    name: fc.constantFrom("m1", "m2", "m3", "m4", "m5", "m6"),
    namespace: fc.constantFrom("kubemoot", "crew", null),
    id: fc.constantFrom("qwen3:8b", "qwen3:14b", "qwen3:32b"),
    params: fc.constantFrom(...PARAMS),
    latency: fc.constantFrom(...CLASSES),
    reasoning: fc.boolean(),
    provider: fc.constantFrom(...PROVIDERS, "missing"),
    // few distinct values, so that ties (and so the tie-breaks) are common
    vramMib: fc.constantFrom(undefined, 0, 9216, 30000),
    ready: fc.boolean(),
  })
  .map((m) =>
    model(m.name, {
      namespace: m.namespace,
      id: m.id,
      provider: m.provider,
      ready: m.ready,
      ...(m.vramMib !== undefined ? { vramMib: m.vramMib } : {}),
      labels: {
        family: "qwen3",
        params: m.params,
        latencyClass: m.latency,
        ...(m.reasoning ? { "capability/reasoning": "true" } : {}),
      },
    }),
  );

const arbProvider: fc.Arbitrary<ModelProvider> = fc
  .record({
    name: fc.constantFrom(...PROVIDERS),
    namespace: fc.constantFrom("kubemoot", "crew", null),
    weight: fc.option(fc.integer({ min: 0, max: 150 }), { nil: undefined }),
    vram: fc.option(fc.constantFrom(24563, 32605, 8192), { nil: undefined }),
    maxParallel: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    agentCount: fc.integer({ min: 0, max: 10 }),
    loaded: fc.subarray(["qwen3:8b", "qwen3:14b", "qwen3:32b"]),
    ready: fc.boolean(),
    rack: fc.constantFrom("r1", "r2", undefined),
  })
  .map((p) =>
    provider(p.name, {
      namespace: p.namespace,
      ready: p.ready,
      agentCount: p.agentCount,
      loaded: p.loaded.map((m) => [m, 5000] as [string, number]),
      ...(p.weight !== undefined ? { weight: p.weight } : {}),
      ...(p.vram !== undefined ? { vramTotalMiB: p.vram } : {}),
      ...(p.maxParallel !== undefined ? { maxParallel: p.maxParallel } : {}),
      ...(p.rack ? { labels: { rack: p.rack } } : {}),
    }),
  );

const arbStatus: fc.Arbitrary<AgentSchedulingStatus | undefined> = fc.option(
  fc.record({
    model: fc.constantFrom("qwen3:8b", "qwen3:14b"),
    modelRef: fc.constantFrom("m1", "m2", "m3"),
    provider: fc.constantFrom(...PROVIDERS),
    endpoint: fc.constant("http://x"),
  }),
  { nil: undefined },
);

const arbAgent: fc.Arbitrary<Agent> = fc
  .record({
    name: fc.constantFrom("coord", "t1", "t2", "t3", "an1", "an2"),
    role: fc.constantFrom("coordinator", "tooler", "analyst"),
    caps: fc.subarray(CAPS),
    crew: fc.constantFrom("crew", "crew", "crew", "other", null),
    scheduling: arbStatus,
  })
  .map((a) =>
    agent(a.name, {
      role: a.role,
      caps: a.caps,
      crew: a.crew,
      ...(a.scheduling ? { scheduling: a.scheduling } : {}),
    }),
  );

const arbPolicy: fc.Arbitrary<CrewSchedulingPolicy> = fc
  .record({
    name: fc.constantFrom("p1", "p2"),
    crewRef: fc.constantFrom("crew", "other"),
    bias: fc.dictionary(
      fc.constantFrom(...CAPS, "default"),
      fc.constantFrom("0", "0.3", "0.5", "0.7", "1", "abc"),
    ),
    rules: fc.array(
      fc.record(
        {
          phase: fc.constantFrom("mulling", "triage", "pondering"),
          require: arbSelector,
          prefer: fc.array(fc.record({ weight: fc.integer({ min: 0, max: 100 }), selector: arbSelector }), {
            maxLength: 2,
          }),
        },
        { requiredKeys: ["phase"] },
      ),
      { maxLength: 3 },
    ),
    spread: fc.option(
      fc.record({
        whenUnsatisfiable: fc.constantFrom("ScheduleAnyway" as const, "DoNotSchedule" as const),
        topologyKey: fc.constantFrom("provider", "rack"),
        phaseKeys: fc.constant(["mulling", "triage"]),
      }),
      { nil: undefined },
    ),
  })
  .map((p) =>
    policy(p.name, {
      crewRef: p.crewRef,
      qualityBias: p.bias,
      rules: p.rules,
      ...(p.spread ? { spread: p.spread } : {}),
    }),
  );

/** Objects are unique by kind, namespace and name, as in a cluster. */
function uniq<T extends { namespace?: string; name: string }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((i) => {
    const k = `${i.namespace ?? ""}/${i.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const arbSnapshot: fc.Arbitrary<ClusterSnapshot> = fc
  .record({
    models: fc.array(arbModel, { maxLength: 8 }),
    providers: fc.array(arbProvider, { maxLength: 5 }),
    agents: fc.array(arbAgent, { minLength: 1, maxLength: 6 }),
    policies: fc.array(arbPolicy, { minLength: 1, maxLength: 2 }),
  })
  .map((s) => ({
    models: uniq(s.models),
    providers: uniq(s.providers),
    agents: uniq(s.agents),
    policies: uniq(s.policies),
    archetypes: [],
  }));

function permute<T>(items: readonly T[], keys: readonly number[]): T[] {
  return items
    .map((item, i) => ({ item, k: keys[i % Math.max(1, keys.length)] ?? 0, i }))
    .sort((a, b) => a.k - b.k || b.i - a.i)
    .map((x) => x.item);
}

describe("bind properties", () => {
  it("is deterministic and independent of manifest order", () => {
    fc.assert(
      fc.property(arbSnapshot, fc.array(fc.integer(), { minLength: 1, maxLength: 8 }), (s, keys) => {
        const first = bind(s, { now: NOW });
        expect(bind(s, { now: NOW })).toEqual(first);
        const shuffled: ClusterSnapshot = {
          models: permute(s.models, keys),
          providers: permute(s.providers, [...keys].reverse()),
          agents: permute(s.agents, keys),
          policies: permute(s.policies, keys),
          archetypes: [],
        };
        expect(bind(shuffled, { now: NOW })).toEqual(first);
      }),
      { numRuns: 300 },
    );
  });

  it("binds only feasible pairs, lists each model id once and the bound model first", () => {
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const r = bind(s, { now: NOW });
        for (const a of r.agents) {
          for (const phase of ["mulling", "triage"] as const) {
            const b = a.phases[phase];
            const ids = a.candidates[phase].map((c) => c.model);
            expect(new Set(ids).size).toBe(ids.length);
            const failed = a.unschedulable.some((u) => u.phase === phase);
            expect(failed).toBe(b === undefined);
            if (!b) continue;
            expect(ids[0]).toBe(b.model);
            const m = s.models.find((x) => x.name === b.modelRef && x.namespace === b.modelNamespace);
            expect(m?.spec.model).toBe(b.model);
            expect(m?.status.ready).toBe(true);
            const p = s.providers.find((x) => x.name === b.provider && x.namespace === b.providerNamespace);
            expect(p?.status.ready).toBe(true);
          }
        }
        // one FailedScheduling event per unschedulable phase
        const failures = r.agents.reduce((n, a) => n + a.unschedulable.length, 0);
        expect(r.events.filter((e) => e.reason === "FailedScheduling")).toHaveLength(failures);
      }),
      { numRuns: 300 },
    );
  });
});
