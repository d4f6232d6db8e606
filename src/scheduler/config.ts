// The sidecar's scheduling configuration (docs/design.md §2): each KUBEMOOT_* variable read
// and validated through the settings registry, with a message that names the variable; what
// is left here is how the variables combine (the agent pair, a static binding's pair).
import {
  type Band,
  type Candidate,
  type CostWeights,
  DEFAULT_FAIR_SHARE,
  type FairShareOptions,
  HELD_PLAN_TTL_MS,
  type PolicyName,
} from "../core/index.js";
import { ErrorCode, KubemootError, quoteInput } from "../errors/index.js";
import { type EndpointAllowlist, parseEndpointAllowlist } from "../net/index.js";
import { isAgentRef, readSetting, SETTINGS, type Setting } from "../settings/index.js";

export interface StaticBinding {
  model: string;
  endpoint: string;
}

/** Fair admission across crews (docs/rules/fairness.md). */
export interface FairShareConfig {
  enabled: boolean;
  /** The sidecar's calls' band when a call names none (KUBEMOOT_PRIORITY). */
  band: Band;
  /** The highest band its crew may ask for (KUBEMOOT_CREW_MAX_PRIORITY). */
  maxBand: Band;
  /** KUBEMOOT_CREW_WEIGHT. */
  weight: number;
  options: FairShareOptions;
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
  /** KUBEMOOT_FAIR_SHARE, KUBEMOOT_PRIORITY, KUBEMOOT_CREW_WEIGHT and their kin. */
  fair: FairShareConfig;
  /** KUBEMOOT_DECISION_RECORDS_PER_SECOND: decision records for the web view; 0 = none, absent = its default. */
  decisionRecordsPerS?: number;
}

/** Re-plans after a lost claim before Place answers gpu-busy: racing sidecars settle in a few. */
const CLAIM_REPLANS = 4;

export { isAgentRef };

/** A static binding: both of its variables, or neither. */
function staticBinding(
  env: NodeJS.ProcessEnv,
  modelVar: Setting<string>,
  endpointVar: Setting<string>,
): StaticBinding | undefined {
  const model = readSetting(env, modelVar);
  const endpoint = readSetting(env, endpointVar);
  if (!model && !endpoint) return undefined;
  if (!model || !endpoint) {
    const [missing, other] = model ? [endpointVar.name, modelVar.name] : [modelVar.name, endpointVar.name];
    throw new KubemootError(ErrorCode.InvalidConfig, `${missing}: set together with ${other}`, {
      field: missing,
    });
  }
  return { model, endpoint };
}

/** Reads and validates the configuration; `agentFlag` (--agent) wins over the env pair. */
export function schedulerConfigFromEnv(env: NodeJS.ProcessEnv, agentFlag?: string): SchedulerConfig {
  const read = <T>(s: Setting<T>): T => readSetting(env, s);
  const { namespace, agentName } = SETTINGS;
  let agent = agentFlag?.trim() ?? "";
  if (!agent) {
    const ns = read(namespace);
    const name = read(agentName);
    if (ns && name) agent = `${ns}/${name}`;
    else if (ns || name) {
      const missing = ns ? agentName.name : namespace.name;
      throw new KubemootError(
        ErrorCode.InvalidConfig,
        `${missing}: set both ${namespace.name} and ${agentName.name}`,
        { field: missing },
      );
    }
  }
  if (agent && !isAgentRef(agent)) {
    throw new KubemootError(ErrorCode.InvalidConfig, `--agent: expected NAMESPACE/NAME, got "${agent}"`, {
      field: "--agent",
    });
  }
  const costWeights = read(SETTINGS.costWeights);
  const synthesisTimeout = read(SETTINGS.synthesisTimeout);
  return {
    agent,
    crew: read(SETTINGS.crew),
    candidatesMulling: read(SETTINGS.candidatesMulling),
    candidatesTriage: read(SETTINGS.candidatesTriage),
    tolerance: read(SETTINGS.tolerance),
    waitLimitS: read(SETTINGS.waitLimit) ?? synthesisTimeout,
    leaseS: read(SETTINGS.lease),
    staticMulling: staticBinding(env, SETTINGS.staticModel, SETTINGS.staticEndpoint),
    staticTriage: staticBinding(env, SETTINGS.triageModel, SETTINGS.triageEndpoint),
    heldPlanTtlMs: HELD_PLAN_TTL_MS,
    claimReplans: CLAIM_REPLANS,
    policy: read(SETTINGS.policy),
    decisionRecordsPerS: read(SETTINGS.decisionRecordsPerS),
    fair: {
      enabled: read(SETTINGS.fairShare),
      band: read(SETTINGS.priority),
      maxBand: read(SETTINGS.crewMaxPriority),
      weight: read(SETTINGS.crewWeight),
      options: { ...DEFAULT_FAIR_SHARE, halfLifeMs: read(SETTINGS.fairHalfLife) * 1000 },
    },
    providerEndpoints: parseEndpointAllowlist(
      read(SETTINGS.providerEndpoints),
      SETTINGS.providerEndpoints.name,
    ),
    ...(costWeights ? { costWeights } : {}),
  };
}

/**
 * PERMISSION_DENIED unless this sidecar may act for `agent`: a sidecar started for an agent
 * serves that agent only; one without (standalone, demo) serves every agent.
 */
export function assertServesAgent(cfg: Pick<SchedulerConfig, "agent">, agent: string, field: string): void {
  const own = cfg.agent;
  if (own === "" || agent === own) return;
  throw new KubemootError(
    ErrorCode.PermissionDenied,
    `${field}: this sidecar serves ${quoteInput(own)} only, not ${quoteInput(agent)}`,
    { field },
  );
}

/**
 * A crew a Commit may record a selection for: with an agent, its own crew (KUBEMOOT_CREW)
 * when one is configured, else a crew of its own namespace. Without an agent, any.
 */
export function assertCrewAllowed(cfg: Pick<SchedulerConfig, "agent" | "crew">, crew: string): void {
  const own = cfg.agent;
  if (own === "" || crew === "") return;
  const mine = cfg.crew;
  const namespace = own.slice(0, own.indexOf("/"));
  if (mine !== "" ? crew === mine : crew.startsWith(`${namespace}/`)) return;
  const allowed = mine !== "" ? quoteInput(mine) : `crews of namespace ${quoteInput(namespace)}`;
  throw new KubemootError(
    ErrorCode.PermissionDenied,
    `crew: this sidecar's agent ${quoteInput(own)} records selections for ${allowed} only, not ${quoteInput(crew)}`,
    { field: "crew" },
  );
}
