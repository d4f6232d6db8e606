// The sidecar's scheduling settings (docs/rules/placement.md §4–§6, docs/rules/identity.md):
// whom it serves, how far it strays from the preferred model, how long a call may wait, the
// ticket lease, the placement policy and its weights, and the endpoints it trusts.
import {
  CANDIDATE_TOLERANCE_POINTS,
  type CostWeights,
  DEFAULT_COST_WEIGHTS,
  DEFAULT_POLICY,
  GPU_WAIT_LIMIT_S,
  isPolicyName,
  POLICY_NAMES,
  type PolicyName,
  TICKET_LEASE_S,
} from "../core/index.js";
import {
  type CommandName,
  defineSetting,
  defineText,
  invalidSetting,
  isAgentRef,
  parseNumber,
  type Setting,
} from "./setting.js";

const READ_BY: readonly CommandName[] = ["sidecar", "standalone"];

function numberSetting(
  name: string,
  o: { default: number; min: number; unit: "seconds" | "points"; help: string },
): Setting<number> {
  return defineSetting({
    name,
    type: "number",
    unit: o.unit,
    default: o.default,
    help: o.help,
    readBy: READ_BY,
    parseValue: (raw, source) => parseNumber(raw, source, o.min),
  });
}

/** A registered placement policy's name (src/core/policies); empty = the default. */
export function parsePolicy(raw: string, source: string): PolicyName {
  const v = raw.trim();
  if (v === "") return DEFAULT_POLICY;
  if (isPolicyName(v)) return v;
  throw invalidSetting(source, `expected one of ${POLICY_NAMES.map((n) => `"${n}"`).join(", ")}, got "${v}"`);
}

/** `name=value` pairs over the keys of CostWeights; each value a finite number ≥ 0. */
export function parseCostWeights(raw: string, source: string): Partial<CostWeights> {
  const out: Partial<CostWeights> = {};
  const keys = Object.keys(DEFAULT_COST_WEIGHTS) as (keyof CostWeights)[];
  for (const part of raw.split(",")) {
    const item = part.trim();
    if (item === "") continue;
    const eq = item.indexOf("=");
    const key = (eq < 0 ? item : item.slice(0, eq)).trim();
    if (!(keys as string[]).includes(key)) {
      throw invalidSetting(source, `unknown weight "${key}", expected one of ${keys.join(", ")}`);
    }
    const text = eq < 0 ? "" : item.slice(eq + 1).trim();
    const value = eq < 0 ? Number.NaN : Number(text);
    if (!Number.isFinite(value) || value < 0) {
      throw invalidSetting(source, `${key}: expected a number ≥ 0, got "${text}"`);
    }
    out[key as keyof CostWeights] = value;
  }
  return out;
}

function identitySetting(name: string, help: string): Setting<string> {
  return defineText({ name, help, readBy: READ_BY, writtenBy: ["webhook"] });
}

export const SCHEDULING_SETTINGS = {
  namespace: identitySetting(
    "KUBEMOOT_NAMESPACE",
    "the namespace of the sidecar's agent; with KUBEMOOT_AGENT_NAME it names the agent the sidecar serves alone (--agent wins)",
  ),
  agentName: identitySetting(
    "KUBEMOOT_AGENT_NAME",
    "the name of the sidecar's agent; set together with KUBEMOOT_NAMESPACE",
  ),
  crew: defineSetting({
    name: "KUBEMOOT_CREW",
    type: "reference",
    default: "",
    help: "the agent's crew (namespace/name): Commit records selection demand for it alone",
    readBy: READ_BY,
    writtenBy: ["webhook"],
    parseValue: (raw, source) => {
      const crew = raw.trim();
      if (crew !== "" && !isAgentRef(crew))
        throw invalidSetting(source, `expected NAMESPACE/NAME, got "${crew}"`);
      return crew;
    },
  }),
  tolerance: numberSetting("KUBEMOOT_MODEL_CANDIDATE_TOLERANCE", {
    default: CANDIDATE_TOLERANCE_POINTS,
    min: Number.NEGATIVE_INFINITY,
    unit: "points",
    help: "how far below the preferred candidate's score an alternative may be",
  }),
  waitLimit: defineSetting<number | undefined>({
    name: "KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS",
    type: "number",
    unit: "seconds",
    default: undefined,
    defaultText: `KUBEMOOT_DISCUSS_SYNTHESIS_TIMEOUT_SECONDS, else ${GPU_WAIT_LIMIT_S}`,
    help: "the longest a call waits for capacity",
    readBy: READ_BY,
    parseValue: (raw, source) => parseNumber(raw, source, 0),
  }),
  synthesisTimeout: numberSetting("KUBEMOOT_DISCUSS_SYNTHESIS_TIMEOUT_SECONDS", {
    default: GPU_WAIT_LIMIT_S,
    min: 1,
    unit: "seconds",
    help: "a discussion's synthesis timeout: the wait limit when KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS is unset",
  }),
  lease: numberSetting("KUBEMOOT_TICKET_LEASE_SECONDS", {
    default: TICKET_LEASE_S,
    min: 1,
    unit: "seconds",
    help: "a ticket's lease (the call timeout and a margin); Renew extends it",
  }),
  policy: defineSetting<PolicyName>({
    name: "KUBEMOOT_POLICY",
    type: "choice",
    default: DEFAULT_POLICY,
    help: "the placement policy: time (by expected seconds until the call finishes) or kubemoot (Kubemoot's weighted cost)",
    readBy: READ_BY,
    parseValue: parsePolicy,
  }),
  costWeights: defineSetting<Partial<CostWeights> | undefined>({
    name: "KUBEMOOT_COST_WEIGHTS",
    type: "list",
    default: undefined,
    defaultText: "docs/rules/placement.md §4",
    help: `the kubemoot policy's weights, e.g. contention=2 (keys: ${Object.keys(DEFAULT_COST_WEIGHTS).join(", ")})`,
    readBy: READ_BY,
    parseValue: (raw, source) => (raw.trim() === "" ? undefined : parseCostWeights(raw, source)),
  }),
  providerEndpoints: defineText({
    name: "KUBEMOOT_PROVIDER_ENDPOINTS",
    type: "list",
    help: "the endpoints provider states may name: host[:port] patterns (* in the host) or CIDRs, comma-separated; empty: every endpoint, with a warning at start",
    readBy: READ_BY,
    writtenBy: ["webhook"],
    flag: "provider-endpoints",
    placeholder: "LIST",
  }),
} as const;
