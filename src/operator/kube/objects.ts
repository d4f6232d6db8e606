// Objects from the API server → the binder's typed objects, with the same validation as the
// manifests reader (../manifests), plus the parts of status that only exist on a cluster: the
// Agent's and policy's conditions and the Agent's lastUnschedulable (so that transition times
// and observedAt survive a reconcile). An invalid object is reported and skipped; the others
// still bind.
//
// ModelProvider status.capacity.agentCount is NOT read back: the operator writes it (agents
// bound to the provider) and reading it would count each agent against itself in the
// parallelism filter, flipping bindings at the edge. Live load comes from provider states.
import type {
  Agent,
  ClusterSnapshot,
  Condition,
  CrewSchedulingPolicy,
  LastUnschedulable,
  Model,
  ModelProvider,
  MootArchetype,
} from "../../binding/index.js";
import { FieldReader, isObject, type Json } from "../../manifests/index.js";
import { type Kind, readMetadata, readObject } from "../manifests/index.js";
import type { KubeObject } from "./client.js";

export interface ObjectIssue {
  kind: string;
  /** `<ns>/<name>` or `<name>`. */
  object: string;
  resourceVersion: string | undefined;
  field: string;
  message: string;
}

export function formatObjectIssue(i: ObjectIssue): string {
  return `${i.kind} ${i.object}: ${i.field ? `${i.field}: ` : ""}${i.message}`;
}

export interface ConvertedObjects {
  snapshot: ClusterSnapshot;
  issues: ObjectIssue[];
}

export interface RawObjects {
  models: readonly KubeObject[];
  providers: readonly KubeObject[];
  agents: readonly KubeObject[];
  policies: readonly KubeObject[];
  archetypes: readonly KubeObject[];
}

export function convertObjects(raw: RawObjects): ConvertedObjects {
  const issues: ObjectIssue[] = [];
  const models = convertAll<Model>("Model", raw.models, issues);
  const providers = convertAll<ModelProvider>("ModelProvider", raw.providers, issues).map(withoutAgentCount);
  const agents = raw.agents.flatMap((o) => {
    const a = convert<Agent>("Agent", o, issues);
    return a ? [withClusterStatus(a, o)] : [];
  });
  const policies = raw.policies.flatMap((o) => {
    const p = convert<CrewSchedulingPolicy>("CrewSchedulingPolicy", o, issues);
    if (!p) return [];
    const conditions = readConditions(statusOf(o)?.conditions);
    return [conditions.length > 0 ? { ...p, status: { conditions } } : p];
  });
  const archetypes = convertAll<MootArchetype>("MootArchetype", raw.archetypes, issues);
  return { snapshot: { models, providers, agents, policies, archetypes }, issues };
}

function convertAll<T>(kind: Kind, objs: readonly KubeObject[], issues: ObjectIssue[]): T[] {
  return objs.flatMap((o) => {
    const v = convert<T>(kind, o, issues);
    return v ? [v] : [];
  });
}

function convert<T>(kind: Kind, o: KubeObject, issues: ObjectIssue[]): T | undefined {
  const doc = JSON.parse(JSON.stringify(o)) as Json;
  const meta = isObject(doc.metadata) ? doc.metadata : {};
  const name = typeof meta.name === "string" ? meta.name : "?";
  const ns = typeof meta.namespace === "string" && kind !== "MootArchetype" ? meta.namespace : undefined;
  const object = ns !== undefined ? `${ns}/${name}` : name;
  const resourceVersion = typeof meta.resourceVersion === "string" ? meta.resourceVersion : undefined;
  const r = new FieldReader({ file: `${kind} ${object}`, document: 1, kind, object });
  const m = readMetadata(r, doc, kind === "MootArchetype");
  const out = m ? readObject(r, kind, doc, m) : undefined;
  for (const i of r.issues)
    issues.push({ kind, object, resourceVersion, field: i.field, message: i.message });
  if (!out || r.issues.length > 0) return undefined;
  return out.value as T;
}

function statusOf(o: KubeObject): Record<string, unknown> | undefined {
  return isObject(o.status) ? o.status : undefined;
}

function withoutAgentCount(p: ModelProvider): ModelProvider {
  const cap = p.status.capacity;
  if (!cap || cap.agentCount === undefined) return p;
  const { agentCount: _ignored, ...rest } = cap;
  return { ...p, status: { ...p.status, capacity: rest } };
}

/** Adds the Agent's conditions and lastUnschedulable, which the manifests reader ignores. */
function withClusterStatus(a: Agent, o: KubeObject): Agent {
  const status = statusOf(o);
  const conditions = readConditions(status?.conditions);
  const sched = isObject(status?.scheduling) ? status.scheduling : undefined;
  const last = readLastUnschedulable(sched?.lastUnschedulable);
  if (conditions.length === 0 && !last) return a;
  const scheduling = { ...(a.status?.scheduling ?? {}), ...(last ? { lastUnschedulable: last } : {}) };
  return { ...a, status: { scheduling, ...(conditions.length > 0 ? { conditions } : {}) } };
}

/** Conditions as stored; malformed entries are dropped (they are the operator's to rewrite). */
export function readConditions(v: unknown): Condition[] {
  if (!Array.isArray(v)) return [];
  const out: Condition[] = [];
  for (const c of v) {
    if (!isObject(c) || typeof c.type !== "string") continue;
    const status = c.status === "True" || c.status === "False" ? c.status : "Unknown";
    out.push({
      type: c.type,
      status,
      reason: typeof c.reason === "string" ? c.reason : "",
      message: typeof c.message === "string" ? c.message : "",
      lastTransitionTime: typeof c.lastTransitionTime === "string" ? c.lastTransitionTime : "",
    });
  }
  return out;
}

function readLastUnschedulable(v: unknown): LastUnschedulable | undefined {
  if (!isObject(v) || typeof v.phase !== "string" || typeof v.reason !== "string") return undefined;
  return {
    phase: v.phase,
    reason: v.reason,
    observedAt: typeof v.observedAt === "string" ? v.observedAt : "",
    ...(typeof v.crewSchedulingPolicy === "string" ? { crewSchedulingPolicy: v.crewSchedulingPolicy } : {}),
  };
}
