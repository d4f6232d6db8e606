// Compiling a CrewSchedulingPolicy: its selectors, its rules per phase, and what is wrong with
// it. Nothing here throws: a broken selector or an unknown phase is a problem reported on the
// policy (status, Warning events) while the rest of the policy still applies.
import { invalidBiasEntries } from "./quality-bias.js";
import { type CompiledSelector, compileSelector } from "./selector.js";
import type { CrewSchedulingPolicy, MootArchetype } from "./types.js";

/** The Agent label naming its crew; a policy governs the agents of its crewRef in its namespace. */
export const CREW_LABEL = "kubemoot.ai/crew";

export interface CompiledPrefer {
  weight: number;
  selector: CompiledSelector;
}

export interface CompiledRule {
  phase: string;
  /** The require selector, or why it is invalid (then nothing is feasible for the phase). */
  require: { ok: true; selector: CompiledSelector } | { ok: false; error: string };
  /** Valid prefer terms; an invalid term is skipped and reported. */
  prefer: CompiledPrefer[];
  /** The rule has a prefer block (even one whose terms are all invalid): no quality bias. */
  hasPrefer: boolean;
  /** No rule names this phase: an empty require (every Model) and no prefer block. */
  implicit: boolean;
}

export type PolicyProblemReason =
  | "InvalidSelector"
  | "UnknownPhase"
  | "ArchetypeNotFound"
  | "DuplicateRule"
  | "InvalidQualityBias"
  | "PolicyConflict";

export interface PolicyProblem {
  reason: PolicyProblemReason;
  message: string;
}

export interface CompiledPolicy {
  policy: CrewSchedulingPolicy;
  rules: ReadonlyMap<string, CompiledRule>;
  problems: PolicyProblem[];
  /** Rule (and phaseKeys) phases the archetype does not declare; empty when it is missing. */
  unknownPhases: string[];
  archetypeFound: boolean;
}

export function compilePolicy(
  policy: CrewSchedulingPolicy,
  archetypes: ReadonlyMap<string, MootArchetype>,
): CompiledPolicy {
  const problems: PolicyProblem[] = [];
  const rules = new Map<string, CompiledRule>();
  policy.spec.rules.forEach((rule, i) => {
    const path = `spec.rules[${i}]`;
    if (rules.has(rule.phase)) {
      problems.push({
        reason: "DuplicateRule",
        message: `${path}.phase: a rule for phase ${rule.phase} already exists; only the first applies`,
      });
      return;
    }
    const require = compileSelector(rule.require, `${path}.require`);
    if (!require.ok) problems.push({ reason: "InvalidSelector", message: require.error });
    const prefer: CompiledPrefer[] = [];
    (rule.prefer ?? []).forEach((term, j) => {
      const sel = compileSelector(term.selector, `${path}.prefer[${j}].selector`);
      if (sel.ok) prefer.push({ weight: term.weight, selector: sel.selector });
      else problems.push({ reason: "InvalidSelector", message: `${sel.error} (term ignored)` });
    });
    rules.set(rule.phase, {
      phase: rule.phase,
      require,
      prefer,
      hasPrefer: (rule.prefer ?? []).length > 0,
      implicit: false,
    });
  });

  const bad = invalidBiasEntries(policy.spec.qualityBias);
  if (bad.length > 0) {
    problems.push({
      reason: "InvalidQualityBias",
      message: `spec.qualityBias: ${bad.map((k) => `${k}: "${policy.spec.qualityBias[k]}"`).join(", ")} ignored (not a number in [0, 1])`,
    });
  }

  const archetype = archetypes.get(policy.spec.archetypeRef);
  const unknownPhases: string[] = [];
  if (!archetype) {
    problems.push({
      reason: "ArchetypeNotFound",
      message: `spec.archetypeRef: MootArchetype ${policy.spec.archetypeRef} not found; phases not validated`,
    });
  } else {
    const declared = new Set(archetype.spec.phases.map((p) => p.name));
    const named = [
      ...policy.spec.rules.map((r) => r.phase),
      ...(policy.spec.topologySpread?.phaseKeys ?? []),
    ];
    for (const phase of new Set(named)) if (!declared.has(phase)) unknownPhases.push(phase);
    unknownPhases.sort();
    if (unknownPhases.length > 0) {
      problems.push({
        reason: "UnknownPhase",
        message: `phases ${unknownPhases.join(", ")} are not declared by MootArchetype ${archetype.name} (${[...declared].join(", ")})`,
      });
    }
  }
  return { policy, rules, problems, unknownPhases, archetypeFound: archetype !== undefined };
}

const IMPLICIT_REQUIRE = compileSelector(undefined);

/** The rule for a phase; a phase without a rule admits every Model, with no prefer block. */
export function ruleFor(compiled: CompiledPolicy, phase: string): CompiledRule {
  return (
    compiled.rules.get(phase) ?? {
      phase,
      require: IMPLICIT_REQUIRE,
      prefer: [],
      hasPrefer: false,
      implicit: true,
    }
  );
}
