// Per-discussion bindings (docs/rules/binding.md §9): each live discussion thread's phases are
// bound by the same filter → score → bind as the per-Agent reconciler — one algorithm, two
// drivers. Rather than a second copy of the decision, `bind` runs over a snapshot whose agents
// are one synthetic Agent per thread: a copy of the thread's Agent (its crew, capabilities and
// role pick the same policy and bias) whose status carries the thread's current binding. So
// hysteresis is per thread, topology spread is per discussion (bind spreads one agent's phases)
// and the load term counts the threads already bound to a provider in a phase.
import { invalidArgument } from "../errors/index.js";
import { BOUND_PHASES, type BoundPhase } from "./archetypes.js";
import { bind } from "./bind.js";
import { cmp } from "./order.js";
import type {
  Agent,
  AgentResult,
  AgentSchedulingStatus,
  BindOptions,
  Candidate,
  ClusterSnapshot,
  PhaseAssignment,
  PhaseBinding,
} from "./types.js";

export interface DiscussionThread {
  threadId: string;
  /** The agent running the discussion, "namespace/name" (an Agent in the snapshot). */
  agent: string;
  /** What the thread is bound to now, per phase (for hysteresis); absent: first binding. */
  current?: Partial<Record<BoundPhase, PhaseAssignment>>;
}

export interface DiscussionResult {
  threadId: string;
  agent: string;
  phase: BoundPhase;
  /** The binding, when the phase could be bound (same shape as AgentResult's phases[phase]). */
  binding?: PhaseBinding;
  /** The phase's ranked candidate list (same rules as the Agent's, binding.md §5). */
  candidates: Candidate[];
  /** Why the phase could not be bound (same reasons as binding.md §6), when it could not. */
  unschedulable?: string;
}

/**
 * Binds every thread's phases over one snapshot; pure, deterministic, `options.now` for time.
 * The snapshot's own Agents are not bound alongside: the load term counts threads only. The
 * result is sorted by threadId, then phase (mulling, triage); a threadId given twice throws.
 */
export function bindDiscussions(
  snapshot: ClusterSnapshot,
  threads: readonly DiscussionThread[],
  options: BindOptions,
): DiscussionResult[] {
  // Sorted first so that the synthetic names, hence bind's order (and so the load term), do
  // not depend on the order the threads came in.
  const sorted = [...threads].sort((a, b) => cmp(a.threadId, b.threadId));
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.threadId === sorted[i - 1]!.threadId) {
      throw invalidArgument("threads", `threadId "${sorted[i]!.threadId}" is given twice`);
    }
  }

  const agents = new Map(snapshot.agents.map((a) => [`${a.namespace}/${a.name}`, a]));
  // The thread's position names its synthetic Agent: unique whatever the ids hold, and, zero
  // padded, bound in threadId order within a namespace. Only synthetic Agents are in the
  // snapshot bind sees, so none can collide with a real one; results come back by key.
  const width = String(sorted.length).length;
  const synthetic: Agent[] = [];
  const keyOf = new Map<DiscussionThread, string>();
  sorted.forEach((thread, i) => {
    const agent = agents.get(thread.agent);
    if (!agent) return;
    const copy = threadAgent(agent, `discussion-${String(i).padStart(width, "0")}`, thread.current);
    synthetic.push(copy);
    keyOf.set(thread, `${copy.namespace}/${copy.name}`);
  });

  // Always run, even with no known thread, so that invalid options throw the same way.
  const results = new Map(bind({ ...snapshot, agents: synthetic }, options).agents.map((r) => [r.key, r]));

  return sorted.flatMap((thread) => {
    const key = keyOf.get(thread);
    const result = key === undefined ? undefined : results.get(key);
    return BOUND_PHASES.map((phase) =>
      result ? phaseOf(thread, phase, result) : unknownAgent(thread, phase),
    );
  });
}

/** A copy of the thread's Agent under a synthetic name, with the thread's current binding. */
function threadAgent(agent: Agent, name: string, current: DiscussionThread["current"]): Agent {
  const scheduling: AgentSchedulingStatus = {
    ...(current?.mulling ?? {}),
    ...(current?.triage ? { triage: current.triage } : {}),
  };
  // The Agent's own status is its binding, not the thread's: never a thread's incumbent.
  return {
    namespace: agent.namespace,
    name,
    labels: agent.labels,
    spec: agent.spec,
    ...(current ? { status: { scheduling } } : {}),
  };
}

function phaseOf(thread: DiscussionThread, phase: BoundPhase, result: AgentResult): DiscussionResult {
  const binding = result.phases[phase];
  const reason = result.unschedulable.find((u) => u.phase === phase)?.reason;
  return {
    threadId: thread.threadId,
    agent: thread.agent,
    phase,
    ...(binding ? { binding } : {}),
    candidates: result.candidates[phase],
    ...(reason !== undefined ? { unschedulable: reason } : {}),
  };
}

function unknownAgent(thread: DiscussionThread, phase: BoundPhase): DiscussionResult {
  return {
    threadId: thread.threadId,
    agent: thread.agent,
    phase,
    candidates: [],
    unschedulable: `no Agent ${thread.agent}`,
  };
}

/**
 * What `bindDiscussions` reads of a snapshot, as one string: equal strings bind every thread
 * alike. Agents' and policies' statuses are left out (no thread reads them), so a reconcile that
 * changed only those, or a provider heartbeat that changed nothing, gives the same key.
 */
export function discussionInputKey(s: ClusterSnapshot): string {
  return JSON.stringify([
    s.models,
    s.providers,
    s.agents.map((a) => [a.namespace, a.name, a.labels, a.spec]),
    s.policies.map((p) => [p.namespace, p.name, p.spec]),
    s.archetypes,
  ]);
}
