// The archetype that ships with the chart (chart/templates/consent-3-archetype.yaml; a test
// keeps the two equal). The binder reads two phases, mulling and triage; the others are the
// discussion stages the seed names, accepted in policies so that rules for them validate.
import type { MootArchetype } from "./types.js";

/** The phases the binder binds, in the order it binds them (fixed in code, like the runtime). */
export const BOUND_PHASES = ["mulling", "triage"] as const;
export type BoundPhase = (typeof BOUND_PHASES)[number];

export const CONSENT_3: MootArchetype = {
  name: "consent-3",
  spec: {
    description:
      "Consent decision-making (sociocracy 3.0). The operator binds one model per agent for mulling and one for triage.",
    phases: [
      {
        name: "mulling",
        description: "The agent's tool-calling evaluation: the model its main calls run on.",
      },
      { name: "triage", description: "The agent's quick should-I-contribute check: a lighter model." },
      {
        name: "evaluating",
        description: "Deliberation, where agents agree, raise a concern or stand aside.",
      },
      { name: "synthesis", description: "The coordinator's synthesis of the crew's answer." },
    ],
  },
};

export const BUILTIN_ARCHETYPES: readonly MootArchetype[] = [CONSENT_3];

/** Archetypes by name: the built-in ones, overridden by any of the same name in `given`. */
export function archetypeIndex(given: readonly MootArchetype[]): Map<string, MootArchetype> {
  const out = new Map<string, MootArchetype>();
  for (const a of BUILTIN_ARCHETYPES) out.set(a.name, a);
  for (const a of given) out.set(a.name, a);
  return out;
}
