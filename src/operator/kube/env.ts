// The agent Deployment's env: finding an Agent's Deployments and planning the JSON patch that
// brings their containers' KUBEMOOT_* variables in line with the binding.
//
// Which Deployments: those in the Agent's namespace labelled `kubemoot.ai/agent: <agent>`; when
// there is none, the Deployment with the Agent's own name (unless that one is labelled for
// another agent). The label lets one Agent drive several Deployments and lets a Deployment
// keep its own name; the name rule covers the common case with no labelling at all.
//
// Which containers: every container of the pod template, or only those listed (comma
// separated) in the Deployment annotation `kubemoot.ai/env-containers`. Both the agent runtime
// (its static endpoint) and the sidecar (its default candidate lists) read these variables.
//
// What changes: only the six managed variables. Other variables keep their order and values;
// a managed variable keeps its position when it already exists, new ones are appended. A
// managed variable defined with valueFrom is replaced by a plain value.
//
// Unschedulable phases: when a phase cannot be bound, its model and endpoint variables are
// left as they are (not removed): like kube-scheduler, which never evicts a running pod because
// nothing new fits, a transient zero match must not roll out pods without a model. Status,
// conditions and Events carry the failure; the candidate lists always follow the binder.
//
// The patch is RFC 6902 with `test` operations on the resourceVersion and on each patched
// container's name, so a Deployment changed since it was cached is never overwritten from a
// stale copy: the server refuses the patch and the change's watch event triggers a new
// reconcile.
import type { AgentResult } from "../../binding/index.js";
import { BINDING_ENV, SETTINGS } from "../../settings/index.js";
import type { JsonPatchOp, KubeObject } from "./client.js";
import { isPlainObject, jsonEqual, toJson } from "./merge-patch.js";

export const AGENT_LABEL = "kubemoot.ai/agent";
export const ENV_CONTAINERS_ANNOTATION = "kubemoot.ai/env-containers";

/** The managed variables, in the order new ones are appended. */
export const MANAGED_ENV: readonly string[] = BINDING_ENV.map((s) => s.name);

const PHASE_VARS: Record<string, readonly string[]> = {
  mulling: [SETTINGS.staticModel.name, SETTINGS.staticEndpoint.name],
  triage: [SETTINGS.triageModel.name, SETTINGS.triageEndpoint.name],
};

/** Deployments by agent (`<ns>/<agent>`), per the rule in the file comment. */
export function deploymentsByAgent(
  deployments: readonly KubeObject[],
  agents: readonly { namespace: string; name: string }[],
): Map<string, KubeObject[]> {
  const labelled = new Map<string, KubeObject[]>();
  const byName = new Map<string, KubeObject>();
  for (const d of deployments) {
    const ns = d.metadata?.namespace;
    const name = d.metadata?.name;
    if (ns === undefined || name === undefined) continue;
    byName.set(`${ns}/${name}`, d);
    const agent = d.metadata?.labels?.[AGENT_LABEL];
    if (agent !== undefined) {
      const k = `${ns}/${agent}`;
      labelled.set(k, [...(labelled.get(k) ?? []), d]);
    }
  }
  const out = new Map<string, KubeObject[]>();
  for (const a of agents) {
    const k = `${a.namespace}/${a.name}`;
    const mine = labelled.get(k);
    if (mine?.length) {
      out.set(
        k,
        [...mine].sort((x, y) => (x.metadata!.name! < y.metadata!.name! ? -1 : 1)),
      );
      continue;
    }
    const same = byName.get(k);
    const owner = same?.metadata?.labels?.[AGENT_LABEL];
    if (same && (owner === undefined || owner === a.name)) out.set(k, [same]);
  }
  return out;
}

interface EnvVar {
  name: string;
  value?: string;
  [key: string]: unknown;
}

/** The JSON patch for one Deployment, or undefined when its env is already right. */
export function planEnvPatch(deployment: KubeObject, agent: AgentResult): JsonPatchOp[] | undefined {
  const spec = toJson(deployment.spec);
  const template = isPlainObject(spec) ? spec.template : undefined;
  const podSpec = isPlainObject(template) ? template.spec : undefined;
  const containers = isPlainObject(podSpec) && Array.isArray(podSpec.containers) ? podSpec.containers : [];
  const only = deployment.metadata?.annotations?.[ENV_CONTAINERS_ANNOTATION]
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);

  const keep = new Set<string>();
  for (const u of agent.unschedulable) for (const v of PHASE_VARS[u.phase] ?? []) keep.add(v);
  const desired = new Map<string, string>();
  for (const name of MANAGED_ENV) {
    const v = agent.env[name];
    if (!keep.has(name) && v !== undefined) desired.set(name, v);
  }

  const ops: JsonPatchOp[] = [];
  containers.forEach((c, i) => {
    if (!isPlainObject(c) || typeof c.name !== "string") return;
    if (only && !only.includes(c.name)) return;
    const current = (Array.isArray(c.env) ? c.env : []) as EnvVar[];
    const next = nextEnv(current, desired, keep);
    if (jsonEqual(current, next)) return;
    const base = `/spec/template/spec/containers/${i}`;
    ops.push({ op: "test", path: `${base}/name`, value: c.name });
    ops.push({ op: "add", path: `${base}/env`, value: next });
  });
  if (ops.length === 0) return undefined;
  const rv = deployment.metadata?.resourceVersion;
  return rv !== undefined ? [{ op: "test", path: "/metadata/resourceVersion", value: rv }, ...ops] : ops;
}

function nextEnv(current: readonly EnvVar[], desired: Map<string, string>, keep: Set<string>): EnvVar[] {
  const managed = new Set<string>(MANAGED_ENV);
  const placed = new Set<string>();
  const out: EnvVar[] = [];
  for (const e of current) {
    if (!managed.has(e.name) || keep.has(e.name)) {
      out.push(e);
      continue;
    }
    const v = desired.get(e.name);
    if (v === undefined || placed.has(e.name)) continue; // no longer bound, or a duplicate
    placed.add(e.name);
    out.push({ name: e.name, value: v });
  }
  for (const name of MANAGED_ENV) {
    const v = desired.get(name);
    if (v !== undefined && !placed.has(name)) out.push({ name, value: v });
  }
  return out;
}
