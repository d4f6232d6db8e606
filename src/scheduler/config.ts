// The sidecar's scheduling configuration: the KUBEMOOT_* variables of the specs, each with a
// documented default, validated at start with a message that names the variable.
import {
  CANDIDATE_TOLERANCE_POINTS,
  type Candidate,
  type CostWeights,
  DEFAULT_COST_WEIGHTS,
  GPU_WAIT_LIMIT_S,
  HELD_PLAN_TTL_MS,
  type PolicyName,
  parseCandidates,
  TICKET_LEASE_S,
} from "../core/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { type EndpointAllowlist, parseEndpointAllowlist } from "../net/index.js";

export interface StaticBinding {
  model: string;
  endpoint: string;
}

export interface SchedulerConfig {
  /** This sidecar's agent, "namespace/name" (KUBEMOOT_NAMESPACE + KUBEMOOT_AGENT_NAME). */
  agent: string;
  /** The agent's crew, "namespace/name" (KUBEMOOT_CREW); empty = no selection entries. */
  crew: string;
  /** KUBEMOOT_MODEL_CANDIDATES_MULLING: used when a request names no candidates. */
  candidatesMulling: Candidate[];
  /** KUBEMOOT_MODEL_CANDIDATES_TRIAGE. */
  candidatesTriage: Candidate[];
  /** KUBEMOOT_MODEL_CANDIDATE_TOLERANCE, points; default 10. */
  tolerance: number;
  /** KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS (default KUBEMOOT_DISCUSS_SYNTHESIS_TIMEOUT_SECONDS, 90). */
  waitLimitS: number;
  /** KUBEMOOT_TICKET_LEASE_SECONDS; default 150 (call timeout 120 s + 30 s). */
  leaseS: number;
  /** KUBEMOOT_MODEL_MODEL + KUBEMOOT_MODEL_ENDPOINT: the static binding for cannot_wait calls. */
  staticMulling: StaticBinding | undefined;
  /** KUBEMOOT_TRIAGE_MODEL_MODEL_ID + KUBEMOOT_TRIAGE_MODEL_ENDPOINT. */
  staticTriage: StaticBinding | undefined;
  /** Held plans are released after this long unused (ms); default 3 minutes. */
  heldPlanTtlMs: number;
  /** How many times Place re-plans after a lost claim before answering gpu-busy; default 4. */
  claimReplans: number;
  /**
   * KUBEMOOT_COST_WEIGHTS, e.g. `contention=2,bestFit=25`: overrides of the placement cost's
   * weights (docs/rules/placement.md §4); absent = the spec's defaults.
   */
  costWeights?: Partial<CostWeights>;
  /**
   * KUBEMOOT_POLICY: "time" (default) chooses by expected seconds until the call finishes;
   * "kubemoot" by Kubemoot's weighted cost (docs/rules/placement.md §4, §5).
   */
  policy: PolicyName;
  /**
   * KUBEMOOT_PROVIDER_ENDPOINTS: the endpoints provider states may name (host[:port] patterns,
   * CIDRs); others are never chosen, forwarded to or sent an unload. Absent or empty = all.
   */
  providerEndpoints?: EndpointAllowlist;
}

export const SCHEDULER_ENV = {
  namespace: "KUBEMOOT_NAMESPACE",
  agentName: "KUBEMOOT_AGENT_NAME",
  crew: "KUBEMOOT_CREW",
  candidatesMulling: "KUBEMOOT_MODEL_CANDIDATES_MULLING",
  candidatesTriage: "KUBEMOOT_MODEL_CANDIDATES_TRIAGE",
  tolerance: "KUBEMOOT_MODEL_CANDIDATE_TOLERANCE",
  waitLimit: "KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS",
  synthesisTimeout: "KUBEMOOT_DISCUSS_SYNTHESIS_TIMEOUT_SECONDS",
  lease: "KUBEMOOT_TICKET_LEASE_SECONDS",
  staticModel: "KUBEMOOT_MODEL_MODEL",
  staticEndpoint: "KUBEMOOT_MODEL_ENDPOINT",
  triageModel: "KUBEMOOT_TRIAGE_MODEL_MODEL_ID",
  triageEndpoint: "KUBEMOOT_TRIAGE_MODEL_ENDPOINT",
  costWeights: "KUBEMOOT_COST_WEIGHTS",
  policy: "KUBEMOOT_POLICY",
  providerEndpoints: "KUBEMOOT_PROVIDER_ENDPOINTS",
} as const;

/** Re-plans after a lost claim before Place answers gpu-busy: racing sidecars settle in a few. */
const CLAIM_REPLANS = 4;

const AGENT_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-zA-Z0-9]([-a-zA-Z0-9._]*[a-zA-Z0-9])?$/;

/** Whether `s` is a "namespace/name" agent reference. */
export function isAgentRef(s: string): boolean {
  return AGENT_RE.test(s);
}

function invalid(name: string, message: string): KubemootError {
  return new KubemootError(ErrorCode.InvalidConfig, `${name}: ${message}`, { field: name });
}

function numberVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw invalid(name, `expected a number ≥ ${min}, got "${raw}"`);
  return n;
}

function candidatesVar(env: NodeJS.ProcessEnv, name: string): Candidate[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return [];
  const parsed = parseCandidates(raw);
  if (parsed.candidates.length === 0) {
    throw invalid(
      name,
      `${parsed.reason ?? "no candidates"} (expected e.g. [{"model":"qwen3:14b","score":60}])`,
    );
  }
  return parsed.candidates;
}

function staticVar(env: NodeJS.ProcessEnv, modelVar: string, endpointVar: string): StaticBinding | undefined {
  const model = env[modelVar]?.trim() ?? "";
  const endpoint = env[endpointVar]?.trim() ?? "";
  if (!model && !endpoint) return undefined;
  if (!model || !endpoint)
    throw invalid(model ? endpointVar : modelVar, `set together with ${model ? modelVar : endpointVar}`);
  try {
    new URL(endpoint);
  } catch {
    throw invalid(endpointVar, `not a URL: "${endpoint}"`);
  }
  return { model, endpoint };
}

function policyVar(env: NodeJS.ProcessEnv): PolicyName {
  const raw = env[SCHEDULER_ENV.policy]?.trim() ?? "";
  if (raw === "" || raw === "time") return "time";
  if (raw === "kubemoot") return "kubemoot";
  throw invalid(SCHEDULER_ENV.policy, `expected "time" or "kubemoot", got "${raw}"`);
}

/** `name=value` pairs over the keys of CostWeights; each value a finite number ≥ 0. */
export function parseCostWeights(raw: string, name = SCHEDULER_ENV.costWeights): Partial<CostWeights> {
  const out: Partial<CostWeights> = {};
  const keys = Object.keys(DEFAULT_COST_WEIGHTS) as (keyof CostWeights)[];
  for (const part of raw.split(",")) {
    const item = part.trim();
    if (item === "") continue;
    const eq = item.indexOf("=");
    const key = (eq < 0 ? item : item.slice(0, eq)).trim();
    if (!(keys as string[]).includes(key)) {
      throw invalid(name, `unknown weight "${key}", expected one of ${keys.join(", ")}`);
    }
    const value = eq < 0 ? Number.NaN : Number(item.slice(eq + 1).trim());
    if (!Number.isFinite(value) || value < 0) {
      throw invalid(name, `${key}: expected a number ≥ 0, got "${eq < 0 ? "" : item.slice(eq + 1).trim()}"`);
    }
    out[key as keyof CostWeights] = value;
  }
  return out;
}

/** Reads and validates the configuration; `agentFlag` (--agent) wins over the env pair. */
export function schedulerConfigFromEnv(env: NodeJS.ProcessEnv, agentFlag?: string): SchedulerConfig {
  let agent = agentFlag?.trim() ?? "";
  if (!agent) {
    const ns = env[SCHEDULER_ENV.namespace]?.trim() ?? "";
    const name = env[SCHEDULER_ENV.agentName]?.trim() ?? "";
    if (ns && name) agent = `${ns}/${name}`;
    else if (ns || name) {
      throw invalid(
        ns ? SCHEDULER_ENV.agentName : SCHEDULER_ENV.namespace,
        "set both KUBEMOOT_NAMESPACE and KUBEMOOT_AGENT_NAME",
      );
    }
  }
  if (agent && !isAgentRef(agent)) throw invalid("--agent", `expected NAMESPACE/NAME, got "${agent}"`);
  const crew = env[SCHEDULER_ENV.crew]?.trim() ?? "";
  if (crew && !isAgentRef(crew)) throw invalid(SCHEDULER_ENV.crew, `expected NAMESPACE/NAME, got "${crew}"`);
  const synthesis = numberVar(env, SCHEDULER_ENV.synthesisTimeout, GPU_WAIT_LIMIT_S, 1);
  return {
    agent,
    crew,
    candidatesMulling: candidatesVar(env, SCHEDULER_ENV.candidatesMulling),
    candidatesTriage: candidatesVar(env, SCHEDULER_ENV.candidatesTriage),
    tolerance: numberVar(env, SCHEDULER_ENV.tolerance, CANDIDATE_TOLERANCE_POINTS, Number.NEGATIVE_INFINITY),
    waitLimitS: numberVar(env, SCHEDULER_ENV.waitLimit, synthesis, 0),
    leaseS: numberVar(env, SCHEDULER_ENV.lease, TICKET_LEASE_S, 1),
    staticMulling: staticVar(env, SCHEDULER_ENV.staticModel, SCHEDULER_ENV.staticEndpoint),
    staticTriage: staticVar(env, SCHEDULER_ENV.triageModel, SCHEDULER_ENV.triageEndpoint),
    heldPlanTtlMs: HELD_PLAN_TTL_MS,
    claimReplans: CLAIM_REPLANS,
    policy: policyVar(env),
    providerEndpoints: parseEndpointAllowlist(
      env[SCHEDULER_ENV.providerEndpoints] ?? "",
      SCHEDULER_ENV.providerEndpoints,
    ),
    ...(env[SCHEDULER_ENV.costWeights]?.trim()
      ? { costWeights: parseCostWeights(env[SCHEDULER_ENV.costWeights] ?? "") }
      : {}),
  };
}
