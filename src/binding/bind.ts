// filter → score → bind over a snapshot (docs/rules/binding.md). One pure function: the same
// snapshot gives the same result whatever order its objects came in, because everything is
// sorted first and every tie is broken by name.
//
// Agents are bound one at a time, coordinators first, then by namespace/name, each phase in
// code order (mulling, then triage), so that the load term can count the agents already bound
// to a provider in a phase and topology spread can see the agent's earlier phases.
import { DEFAULT_ENGINE } from "../core/index.js";
import { invalidArgument } from "../errors/index.js";
import { archetypeIndex, BOUND_PHASES, type BoundPhase } from "./archetypes.js";
import { candidateList } from "./candidates.js";
import { condition } from "./conditions.js";
import { agentEnv } from "./env.js";
import { runFilters } from "./filter.js";
import { byKey, cmp, objectKey } from "./order.js";
import type { FeasiblePair, FilterStatus, PhaseContext } from "./plugin.js";
import { type CompiledPolicy, type CompiledRule, CREW_LABEL, compilePolicy, ruleFor } from "./policy.js";
import { effectiveBias } from "./quality-bias.js";
import { pickWithHysteresis, rank } from "./rank.js";
import { scopedIndex } from "./resolve.js";
import { type ScoredPair, scorePair } from "./score.js";
import { describeDomain, keepsSpread, spreadApplies, topologyDomain } from "./topology.js";
import type {
  Agent,
  AgentResult,
  AgentSchedulingStatus,
  BindOptions,
  BindResult,
  CapacityStrategy,
  ClusterSnapshot,
  FairShareSpec,
  Model,
  ModelProvider,
  PhaseAssignment,
  PhaseBinding,
  PolicyResult,
  SchedulingEvent,
  TopologySpread,
  Unschedulable,
} from "./types.js";
import { noPolicyReason, spreadReason, zeroMatchReason } from "./zero-match.js";

export const DEFAULT_CONCURRENCY_FACTOR = 8;
/** The operator retries an unschedulable agent after this long (and on any relevant change). */
export const UNSCHEDULABLE_RETRY_MS = 30_000;

interface Settings {
  strategy: CapacityStrategy;
  concurrencyFactor: number;
  evictionOverheadMiB: number;
  now: Date;
}

function settings(options: BindOptions): Settings {
  const strategy = options.strategy ?? "spread";
  if (strategy !== "spread" && strategy !== "binpack") {
    throw invalidArgument("strategy", `expected spread or binpack, got "${String(strategy)}"`);
  }
  const concurrencyFactor = options.concurrencyFactor ?? DEFAULT_CONCURRENCY_FACTOR;
  if (!Number.isFinite(concurrencyFactor) || concurrencyFactor < 0) {
    throw invalidArgument("concurrencyFactor", `expected a number ≥ 0, got ${concurrencyFactor}`);
  }
  const evictionOverheadMiB = options.evictionOverheadMiB ?? 0;
  if (!Number.isFinite(evictionOverheadMiB) || evictionOverheadMiB < 0) {
    throw invalidArgument("evictionOverheadMiB", `expected a number ≥ 0, got ${evictionOverheadMiB}`);
  }
  if (!(options.now instanceof Date) || Number.isNaN(options.now.getTime())) {
    throw invalidArgument("now", "expected a valid Date");
  }
  return { strategy, concurrencyFactor, evictionOverheadMiB, now: options.now };
}

/** Binds every agent of the snapshot; see the file comment for the order of work. */
export function bind(snapshot: ClusterSnapshot, options: BindOptions): BindResult {
  const cfg = settings(options);
  const models = scopedIndex(byKey(snapshot.models));
  const providers = scopedIndex(byKey(snapshot.providers));
  const archetypes = archetypeIndex(byKey(snapshot.archetypes));
  const compiled = byKey(snapshot.policies).map((p) => compilePolicy(p, archetypes));

  // One policy per (namespace, crew): the first by name; the others are reported.
  const governing = new Map<string, CompiledPolicy>();
  for (const c of compiled) {
    const key = crewKey(c.policy.namespace, c.policy.spec.crewRef);
    const first = governing.get(key);
    if (first) {
      c.problems.push({
        reason: "PolicyConflict",
        message: `spec.crewRef: crew ${c.policy.spec.crewRef} is governed by CrewSchedulingPolicy ${first.policy.name}; this policy applies to no agent`,
      });
    } else governing.set(key, c);
  }

  const load: Record<BoundPhase, Map<string, number>> = { mulling: new Map(), triage: new Map() };
  const agents = [...snapshot.agents].sort(
    (a, b) =>
      Number(!isCoordinator(a)) - Number(!isCoordinator(b)) ||
      cmp(a.namespace, b.namespace) ||
      cmp(a.name, b.name),
  );
  const results: AgentResult[] = [];
  for (const agent of agents) {
    const crew = agent.labels[CREW_LABEL];
    const policy = crew === undefined ? undefined : governing.get(crewKey(agent.namespace, crew));
    results.push(
      policy
        ? bindAgent(agent, policy, { cfg, visible: models.visible(agent.namespace), providers, load })
        : unbound(agent, noPolicyReason(crew, agent.namespace), cfg.now),
    );
  }
  results.sort((a, b) => cmp(a.key, b.key));

  const policies = compiled.map((c) => policyResult(c, results, cfg.now));
  return { agents: results, policies, events: events(compiled, results) };
}

interface AgentEnv {
  cfg: Settings;
  visible: Model[];
  providers: { resolve(namespace: string, name: string): ModelProvider | undefined };
  load: Record<BoundPhase, Map<string, number>>;
}

function bindAgent(agent: Agent, compiled: CompiledPolicy, env: AgentEnv): AgentResult {
  const { policy } = compiled;
  const bias = effectiveBias(policy.spec.qualityBias, agent.spec.capabilities);
  const spread = policy.spec.topologySpread;
  const current = agent.status?.scheduling;
  const phases: AgentResult["phases"] = {};
  const candidates: AgentResult["candidates"] = { mulling: [], triage: [] };
  const unschedulable: Unschedulable[] = [];
  const picked: Partial<Record<BoundPhase, ScoredPair>> = {};
  const taken: Taken[] = [];

  for (const phase of BOUND_PHASES) {
    const rule = ruleFor(compiled, phase);
    const counts = env.load[phase];
    const ctx: PhaseContext = {
      phase,
      rule,
      agent,
      bias,
      strategy: env.cfg.strategy,
      concurrencyFactor: env.cfg.concurrencyFactor,
      evictionOverheadMiB: env.cfg.evictionOverheadMiB,
      boundTo: (p) => counts.get(objectKey(p)) ?? 0,
    };

    const statuses: FilterStatus[] = [];
    const feasible: ScoredPair[] = [];
    for (const model of env.visible) {
      const pair = { model, provider: env.providers.resolve(agent.namespace, model.spec.providerRef) };
      const status = runFilters(ctx, pair);
      statuses.push(status);
      if (status.ok) feasible.push(scorePair(ctx, pair as FeasiblePair));
    }
    const decision = decide({
      phase,
      rule,
      ranked: rank(feasible),
      statuses,
      mulling: picked.mulling,
      spread: spreadApplies(spread, phase) && taken.length > 0 ? spread : undefined,
      taken,
      current: currentAssignment(current, phase),
    });

    if ("pick" in decision) {
      const { pick, fallback } = decision;
      picked[phase] = pick;
      // A fallback reports the mulling pick as it was scored for mulling.
      phases[phase] = { ...phaseBinding(pick), ...(fallback ? { fallback: true } : {}) };
      counts.set(objectKey(pick.provider), (counts.get(objectKey(pick.provider)) ?? 0) + 1);
      if (spreadApplies(spread, phase)) {
        const key = topologyDomain(pick.provider, spread.topologyKey);
        if (key !== undefined) {
          taken.push({ phase, key, domain: describeDomain(pick.provider, spread.topologyKey) });
        }
      }
    } else {
      unschedulable.push({ phase, reason: decision.reason });
    }
    candidates[phase] = candidateList(ctx, env.visible, picked[phase]?.model);
  }

  return agentResult(
    agent,
    policy.name,
    phases,
    candidates,
    unschedulable,
    env.cfg.now,
    policy.spec.fairShare,
  );
}

/** A topology domain an earlier phase of the agent took. */
interface Taken {
  phase: string;
  /** The domain as compared (topologyDomain). */
  key: string;
  /** The domain as shown (`provider=ollama-a`). */
  domain: string;
}

/** A pick (`fallback`: triage took the mulling pick), or why there is none. */
type Decision = { pick: ScoredPair; fallback: boolean } | { reason: string };

/**
 * The pick of one phase from its ranked feasible pairs: topology spread first (the pairs that
 * keep it, or with ScheduleAnyway all of them), then hysteresis. Triage with no feasible pair
 * takes the mulling pick, unless a DoNotSchedule spread forbids sharing its domain.
 */
function decide(d: {
  phase: BoundPhase;
  rule: CompiledRule;
  ranked: readonly ScoredPair[];
  statuses: readonly FilterStatus[];
  mulling: ScoredPair | undefined;
  /** The spread, when it constrains this phase (earlier phases of phaseKeys took domains). */
  spread: TopologySpread | undefined;
  taken: readonly Taken[];
  current: Partial<PhaseAssignment> | undefined;
}): Decision {
  const takenKeys = new Set(d.taken.map((t) => t.key));
  const keeps = (p: ScoredPair) => !d.spread || keepsSpread(p.provider, d.spread.topologyKey, takenKeys);
  const strict = d.spread?.whenUnsatisfiable === "DoNotSchedule";
  if (d.ranked.length === 0) {
    if (d.phase === "triage" && d.mulling && (keeps(d.mulling) || !strict)) {
      return { pick: d.mulling, fallback: true };
    }
    return { reason: zeroMatchReason(d.rule, d.statuses) };
  }
  const allowed = d.ranked.filter(keeps);
  if (allowed.length === 0 && strict) return { reason: spreadReason(d.rule, d.taken) };
  const pick = pickWithHysteresis(allowed.length > 0 ? allowed : d.ranked, d.current)!;
  return { pick, fallback: false };
}

function phaseBinding(pick: ScoredPair): PhaseBinding {
  return {
    model: pick.model.spec.model,
    modelRef: pick.model.name,
    provider: pick.provider.name,
    endpoint: pick.provider.spec.endpoint,
    engine: pick.provider.spec.engine ?? DEFAULT_ENGINE,
    score: pick.score,
    ...(pick.model.namespace !== undefined ? { modelNamespace: pick.model.namespace } : {}),
    ...(pick.provider.namespace !== undefined ? { providerNamespace: pick.provider.namespace } : {}),
  };
}

function currentAssignment(
  status: AgentSchedulingStatus | undefined,
  phase: BoundPhase,
): Partial<PhaseAssignment> | undefined {
  if (!status) return undefined;
  return phase === "triage" ? status.triage : status;
}

function unbound(agent: Agent, reason: string, now: Date): AgentResult {
  const unschedulable = BOUND_PHASES.map((phase) => ({ phase, reason }));
  return agentResult(agent, undefined, {}, { mulling: [], triage: [] }, unschedulable, now);
}

function assignment(b: PhaseBinding): PhaseAssignment {
  return { model: b.model, modelRef: b.modelRef, provider: b.provider, endpoint: b.endpoint };
}

function agentResult(
  agent: Agent,
  policyName: string | undefined,
  phases: AgentResult["phases"],
  candidates: AgentResult["candidates"],
  unschedulable: Unschedulable[],
  now: Date,
  fairShare?: FairShareSpec,
): AgentResult {
  const scheduling: AgentSchedulingStatus = {
    ...(phases.mulling ? assignment(phases.mulling) : {}),
    ...(phases.triage ? { triage: assignment(phases.triage) } : {}),
  };
  const first = unschedulable[0];
  const lastUnschedulable = first
    ? {
        phase: first.phase,
        reason: first.reason,
        observedAt: now.toISOString(),
        ...(policyName !== undefined ? { crewSchedulingPolicy: policyName } : {}),
      }
    : agent.status?.scheduling?.lastUnschedulable;
  if (lastUnschedulable) scheduling.lastUnschedulable = lastUnschedulable;

  const scheduled = first
    ? {
        type: "Scheduled",
        status: "False" as const,
        reason: "Unschedulable",
        message: unschedulable.map((u) => `${u.phase}: ${u.reason}`).join("; "),
      }
    : {
        type: "Scheduled",
        status: "True" as const,
        reason: "Scheduled",
        message: BOUND_PHASES.map((p) => {
          const b = phases[p]!;
          return `${p}: ${b.model} on ${b.provider}${b.fallback ? " (mulling fallback)" : ""}`;
        }).join("; "),
      };
  return {
    key: `${agent.namespace}/${agent.name}`,
    namespace: agent.namespace,
    name: agent.name,
    ...(policyName !== undefined ? { policy: { namespace: agent.namespace, name: policyName } } : {}),
    phases,
    candidates,
    unschedulable,
    status: { scheduling, conditions: [condition(agent.status?.conditions, scheduled, now)] },
    env: agentEnv(phases, candidates, fairShare),
  };
}

function policyResult(c: CompiledPolicy, agents: readonly AgentResult[], now: Date): PolicyResult {
  const { namespace, name } = c.policy;
  const governed = agents.filter((a) => a.policy?.namespace === namespace && a.policy.name === name);
  const failing = governed.filter((a) => a.unschedulable.length > 0).length;
  const prev = c.policy.status?.conditions;
  const problems = c.problems.map((p) => p.message);
  const conditions = [
    condition(
      prev,
      problems.length === 0
        ? { type: "Valid", status: "True", reason: "Valid", message: "selectors and phases are valid" }
        : { type: "Valid", status: "False", reason: c.problems[0]!.reason, message: problems.join("; ") },
      now,
    ),
    condition(
      prev,
      failing === 0
        ? {
            type: "Scheduled",
            status: "True",
            reason: "Scheduled",
            message: `${governed.length} agent(s) bound`,
          }
        : {
            type: "Scheduled",
            status: "False",
            reason: "Unschedulable",
            message: `${failing} of ${governed.length} agent(s) have an unschedulable phase`,
          },
      now,
    ),
  ];
  return {
    namespace,
    name,
    problems,
    unknownPhases: c.unknownPhases,
    agents: governed.length,
    unschedulableAgents: failing,
    status: { conditions, unknownPhases: c.unknownPhases },
  };
}

function events(compiled: readonly CompiledPolicy[], agents: readonly AgentResult[]): SchedulingEvent[] {
  const out: SchedulingEvent[] = [];
  for (const c of compiled) {
    for (const p of c.problems) {
      out.push({
        type: "Warning",
        reason: p.reason,
        object: `CrewSchedulingPolicy/${c.policy.namespace}/${c.policy.name}`,
        message: p.message,
      });
    }
  }
  for (const a of agents) {
    const object = a.policy
      ? `CrewSchedulingPolicy/${a.policy.namespace}/${a.policy.name}`
      : `Agent/${a.namespace}/${a.name}`;
    for (const u of a.unschedulable) {
      out.push({
        type: "Warning",
        reason: "FailedScheduling",
        object,
        message: `agent ${a.key} phase ${u.phase}: ${u.reason}`,
      });
    }
  }
  return out;
}

function isCoordinator(agent: Agent): boolean {
  return agent.spec.discussRole === "coordinator";
}

function crewKey(namespace: string, crew: string): string {
  return `${namespace}\u0000${crew}`;
}
