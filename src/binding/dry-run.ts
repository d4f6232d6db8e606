// The `bind` dry run's document (docs/rules/binding.md "`bind` dry run"), built with its keys in the
// order the spec shows them. A phase that cannot be bound is absent and listed under
// `unschedulable`.
import type { BindResult, Candidate, PhaseBinding, SchedulingEvent, Unschedulable } from "./types.js";

export interface DryRunPhase {
  model: string;
  modelRef: string;
  provider: string;
  endpoint: string;
  /** The bound provider's engine. */
  engine: string;
  score: number;
}

export interface DryRunAgent {
  mulling?: DryRunPhase;
  triage?: DryRunPhase;
  candidates: { mulling: Candidate[]; triage: Candidate[] };
  unschedulable: Unschedulable[];
}

export interface DryRunOutput {
  agents: Record<string, DryRunAgent>;
  events: SchedulingEvent[];
}

function phase(b: PhaseBinding): DryRunPhase {
  return {
    model: b.model,
    modelRef: b.modelRef,
    provider: b.provider,
    endpoint: b.endpoint,
    engine: b.engine,
    score: b.score,
  };
}

export function toDryRun(result: BindResult): DryRunOutput {
  const agents: Record<string, DryRunAgent> = {};
  for (const a of result.agents) {
    agents[a.key] = {
      ...(a.phases.mulling ? { mulling: phase(a.phases.mulling) } : {}),
      ...(a.phases.triage ? { triage: phase(a.phases.triage) } : {}),
      candidates: {
        mulling: a.candidates.mulling.map((c) => ({ model: c.model, score: c.score })),
        triage: a.candidates.triage.map((c) => ({ model: c.model, score: c.score })),
      },
      unschedulable: a.unschedulable.map((u) => ({ phase: u.phase, reason: u.reason })),
    };
  }
  const events = result.events.map((e) => ({
    type: e.type,
    reason: e.reason,
    object: e.object,
    message: e.message,
  }));
  return { agents, events };
}
