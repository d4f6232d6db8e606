// Reading the dry run's inputs from parsed documents (plain JS values; no I/O): Nodes, bound
// and gang Pods, ConfigMaps, TopologySources, ModelDeployments and existing Kueue Topologies.
// Every problem is an issue naming the file, document, object and field; other kinds are
// skipped. See README.md for how pods and engines become gangs.
import { compileSelector, type LabelSelector, labelKeyError } from "../binding/index.js";
import type { ManifestIssue } from "../operator/manifests/index.js";
import { cmp } from "./capacity.js";
import { HOSTNAME, MAX_LEVELS, normalizeLevels } from "./levels.js";
import { parseQuantity } from "./quantity.js";
import { describe, isObject, type Json, parseDuration, Reader } from "./reader.js";
import type {
  Gang,
  Labels,
  Resources,
  SourceArm,
  Taint,
  Toleration,
  TopologyRequest,
  TopologySource,
} from "./types.js";

export const POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name";
export const POD_GROUP_TOTAL = "kueue.x-k8s.io/pod-group-total-count";
export const REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology";
export const PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology";
export const QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name";
/** What one engine device counts as, per pod (see README.md). */
export const GPU_RESOURCE = "nvidia.com/gpu";
const KUBEMOOT = "kubemoot.ai/v1alpha1";

export interface ParsedDocument {
  file: string;
  /** 1-based position in the file. */
  document: number;
  value: unknown;
}

export interface NodeManifest {
  name: string;
  labels: Labels;
  ready: boolean;
  unschedulable: boolean;
  taints: Taint[];
  allocatable: Resources;
}

export interface PodManifest {
  namespace: string;
  name: string;
  labels: Labels;
  annotations: Labels;
  nodeName?: string;
  phase?: string;
  requests: Resources;
  tolerations: Toleration[];
  /** The document as written, for --emit kueue. */
  raw: Json;
  ref: { file: string; document: number };
}

export interface EngineGangSpec {
  name: string;
  size: number;
  requests: Resources;
  requiredLevel: string;
}

export interface DeploymentManifest {
  namespace: string;
  name: string;
  replicas: number;
  tolerations: Toleration[];
  engines: EngineGangSpec[];
  createdAt?: number;
}

export interface TopologyManifests {
  nodes: NodeManifest[];
  pods: PodManifest[];
  configMaps: Map<string, Record<string, string>>;
  sources: TopologySource[];
  deployments: DeploymentManifest[];
  /** Existing Kueue Topologies by name → level keys (for drift detection). */
  kueueTopologies: Map<string, string[]>;
}

export function parseTopologyManifests(docs: readonly ParsedDocument[]): {
  manifests: TopologyManifests;
  issues: ManifestIssue[];
} {
  const issues: ManifestIssue[] = [];
  const m: TopologyManifests = {
    nodes: [],
    pods: [],
    configMaps: new Map(),
    sources: [],
    deployments: [],
    kueueTopologies: new Map(),
  };
  for (const d of docs) {
    if (d.value === null || d.value === undefined) continue;
    const base = { file: d.file, document: d.document };
    if (!isObject(d.value)) {
      issues.push({ ...base, field: "", message: `expected an object, got ${describe(d.value)}` });
      continue;
    }
    const doc = d.value;
    const apiVersion = doc.apiVersion;
    const kind = typeof doc.kind === "string" ? doc.kind : undefined;
    const meta = isObject(doc.metadata) ? doc.metadata : undefined;
    const name = typeof meta?.name === "string" ? meta.name : undefined;
    const namespace = typeof meta?.namespace === "string" ? meta.namespace : "default";
    const clusterScoped = kind === "Node" || kind === "TopologySource" || kind === "Topology";
    const object = name === undefined ? undefined : clusterScoped ? name : `${namespace}/${name}`;
    const r = new Reader({ ...base, ...(kind ? { kind } : {}), ...(object ? { object } : {}) }, issues);
    const known =
      (apiVersion === "v1" && (kind === "Node" || kind === "Pod" || kind === "ConfigMap")) ||
      (apiVersion === KUBEMOOT && (kind === "TopologySource" || kind === "ModelDeployment")) ||
      (typeof apiVersion === "string" && apiVersion.startsWith("kueue.x-k8s.io/") && kind === "Topology");
    if (!known) continue;
    if (name === undefined || name === "") {
      r.fail("metadata.name", "required");
      continue;
    }
    switch (kind) {
      case "Node": {
        const node = readNode(r, doc, name);
        if (node) m.nodes.push(node);
        break;
      }
      case "Pod": {
        const pod = readPod(r, doc, namespace, name, base);
        if (pod) m.pods.push(pod);
        break;
      }
      case "ConfigMap":
        m.configMaps.set(`${namespace}/${name}`, r.stringMap(doc, "data", "data") ?? {});
        break;
      case "TopologySource": {
        const s = readSource(r, doc, name);
        if (s) m.sources.push(s);
        break;
      }
      case "ModelDeployment": {
        const dep = readDeployment(r, doc, namespace, name);
        if (dep) m.deployments.push(dep);
        break;
      }
      case "Topology": {
        const spec = r.object(doc, "spec", "spec", true);
        const levels = (r.list(spec, "levels", "spec.levels") ?? []).map((l, i) =>
          isObject(l) && typeof l.nodeLabel === "string"
            ? l.nodeLabel
            : (r.fail(`spec.levels[${i}].nodeLabel`, "required") ?? ""),
        );
        m.kueueTopologies.set(name, levels);
        break;
      }
    }
  }
  const seen = new Set<string>();
  for (const n of m.nodes) {
    if (seen.has(n.name))
      issues.push({
        file: "",
        document: 0,
        kind: "Node",
        object: n.name,
        field: "metadata.name",
        message: "declared twice",
      });
    seen.add(n.name);
  }
  m.nodes.sort((a, b) => cmp(a.name, b.name));
  m.sources.sort((a, b) => cmp(a.name, b.name));
  return { manifests: m, issues };
}

function readNode(r: Reader, doc: Json, name: string): NodeManifest | undefined {
  const labels = r.stringMap(doc.metadata as Json, "labels", "metadata.labels") ?? {};
  // The kubelet always sets the hostname label; hand-written files often leave it out.
  labels[HOSTNAME] ??= name;
  const spec = r.object(doc, "spec", "spec");
  const unschedulable = r.boolean(spec, "unschedulable", "spec.unschedulable") ?? false;
  const taints: Taint[] = [];
  for (const [i, t] of (r.list(spec, "taints", "spec.taints") ?? []).entries()) {
    const p = `spec.taints[${i}]`;
    if (!isObject(t)) {
      r.fail(p, "expected an object");
      continue;
    }
    const key = r.string(t, "key", `${p}.key`, true);
    const value = r.string(t, "value", `${p}.value`);
    const effect = r.string(t, "effect", `${p}.effect`, true);
    if (effect !== undefined && !["NoSchedule", "PreferNoSchedule", "NoExecute"].includes(effect)) {
      r.fail(`${p}.effect`, `expected NoSchedule, PreferNoSchedule or NoExecute, got "${effect}"`);
      continue;
    }
    if (key !== undefined && effect !== undefined)
      taints.push({ key, effect, ...(value !== undefined ? { value } : {}) });
  }
  const status = r.object(doc, "status", "status");
  const allocatable = readResources(r, status, "allocatable", "status.allocatable");
  let ready = true; // a file without conditions is taken as Ready
  (r.list(status, "conditions", "status.conditions") ?? []).forEach((c) => {
    if (isObject(c) && c.type === "Ready") ready = c.status === "True";
  });
  return { name, labels, ready, unschedulable, taints, allocatable };
}

function readResources(
  r: Reader,
  parent: Json | undefined,
  key: string,
  path: string,
): Record<string, number> {
  const obj = r.object(parent, key, path);
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj ?? {})) {
    const q = parseQuantity(v);
    if (q === undefined) r.fail(`${path}["${k}"]`, `${describe(v)} is not a resource quantity`);
    else out[k] = q;
  }
  return out;
}

function readTolerations(r: Reader, parent: Json | undefined, path: string): Toleration[] {
  const out: Toleration[] = [];
  for (const [i, t] of (r.list(parent, "tolerations", path) ?? []).entries()) {
    const p = `${path}[${i}]`;
    if (!isObject(t)) {
      r.fail(p, "expected an object");
      continue;
    }
    const key = r.string(t, "key", `${p}.key`);
    const operator = r.string(t, "operator", `${p}.operator`);
    if (operator !== undefined && operator !== "Exists" && operator !== "Equal") {
      r.fail(`${p}.operator`, `expected Exists or Equal, got "${operator}"`);
      continue;
    }
    const value = r.string(t, "value", `${p}.value`);
    const effect = r.string(t, "effect", `${p}.effect`);
    out.push({
      ...(key ? { key } : {}),
      operator: (operator ?? "Equal") as "Exists" | "Equal",
      ...(value !== undefined ? { value } : {}),
      ...(effect ? { effect } : {}),
    });
  }
  return out;
}

function readPod(
  r: Reader,
  doc: Json,
  namespace: string,
  name: string,
  ref: { file: string; document: number },
): PodManifest | undefined {
  const meta = doc.metadata as Json;
  const labels = r.stringMap(meta, "labels", "metadata.labels") ?? {};
  const annotations = r.stringMap(meta, "annotations", "metadata.annotations") ?? {};
  const spec = r.object(doc, "spec", "spec", true);
  if (!spec) return undefined;
  const nodeName = r.string(spec, "nodeName", "spec.nodeName");
  const requests: Record<string, number> = {};
  for (const [i, c] of (r.list(spec, "containers", "spec.containers") ?? []).entries()) {
    const p = `spec.containers[${i}]`;
    if (!isObject(c)) {
      r.fail(p, "expected an object");
      continue;
    }
    const res = r.object(c, "resources", `${p}.resources`);
    const req = readResources(r, res, "requests", `${p}.resources.requests`);
    // Kubernetes defaults a missing request to the limit.
    const lim = readResources(r, res, "limits", `${p}.resources.limits`);
    for (const [k, v] of Object.entries({ ...lim, ...req })) requests[k] = (requests[k] ?? 0) + v;
  }
  requests.pods = 1000;
  const tolerations = readTolerations(r, spec, "spec.tolerations");
  const status = r.object(doc, "status", "status");
  const phase = r.string(status, "phase", "status.phase");
  for (const key of [REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY]) {
    const level = annotations[key];
    if (level === undefined) continue;
    const err = level === HOSTNAME ? `${HOSTNAME} is implicit and cannot be requested` : labelKeyError(level);
    if (err) r.fail(`metadata.annotations["${key}"]`, err);
  }
  if (annotations[REQUIRED_TOPOLOGY] !== undefined && annotations[PREFERRED_TOPOLOGY] !== undefined) {
    r.fail(
      `metadata.annotations["${PREFERRED_TOPOLOGY}"]`,
      `cannot be set together with ${REQUIRED_TOPOLOGY}`,
    );
  }
  const total = annotations[POD_GROUP_TOTAL];
  if (total !== undefined && !/^[1-9]\d*$/.test(total)) {
    r.fail(`metadata.annotations["${POD_GROUP_TOTAL}"]`, `expected a positive integer, got "${total}"`);
  }
  return {
    namespace,
    name,
    labels,
    annotations,
    ...(nodeName ? { nodeName } : {}),
    ...(phase ? { phase } : {}),
    requests,
    tolerations,
    raw: doc,
    ref,
  };
}

const CREDENTIALS = ["bearerTokenSecretRef", "basicAuthSecretRef", "clientCertificateSecretRef"];
const DOMAIN_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/$/;

function readSource(r: Reader, doc: Json, name: string): TopologySource | undefined {
  const spec = r.object(doc, "spec", "spec", true);
  if (!spec) return undefined;
  const sel = r.object(spec, "nodeSelector", "spec.nodeSelector", true);
  let nodeSelector: LabelSelector | undefined;
  if (sel) {
    nodeSelector = sel as LabelSelector;
    const compiled = compileSelector(nodeSelector, "spec.nodeSelector");
    if (!compiled.ok) r.fail("spec.nodeSelector", compiled.error);
  }
  const rawLevels = r.list(spec, "levels", "spec.levels");
  const levels: string[] = [];
  if (!rawLevels) r.fail("spec.levels", "required");
  else if (rawLevels.length < 1 || rawLevels.length > MAX_LEVELS) {
    r.fail("spec.levels", `expected 1..${MAX_LEVELS} level keys, got ${rawLevels.length}`);
  }
  for (const [i, l] of (rawLevels ?? []).entries()) {
    const p = `spec.levels[${i}]`;
    if (typeof l !== "string") {
      r.fail(p, `expected a string, got ${describe(l)}`);
      continue;
    }
    if (l === HOSTNAME) {
      r.fail(p, `${HOSTNAME} is implicit and must not be listed`);
      continue;
    }
    const err = labelKeyError(l);
    if (err) {
      r.fail(p, err);
      continue;
    }
    if (levels.includes(l)) {
      r.fail(p, `${l} is listed twice`);
      continue;
    }
    levels.push(l);
  }
  const prefix = r.string(spec, "additionalWritePrefix", "spec.additionalWritePrefix");
  if (prefix !== undefined && !DOMAIN_PREFIX.test(prefix)) {
    r.fail("spec.additionalWritePrefix", `"${prefix}" is not a domain prefix like "example.com/"`);
  }
  const arms = ["nodeLabels", "configMap", "webhook"].filter(
    (k) => spec[k] !== undefined && spec[k] !== null,
  );
  if (arms.length !== 1) {
    r.fail(
      "spec",
      `exactly one of nodeLabels, configMap, webhook is required, got ${arms.length === 0 ? "none" : arms.join(", ")}`,
    );
    return undefined;
  }
  const arm = readArm(r, spec, arms[0]!);
  if (!nodeSelector || !arm || levels.length !== (rawLevels?.length ?? -1)) return undefined;
  return {
    name,
    nodeSelector,
    levels: normalizeLevels(levels),
    ...(prefix !== undefined ? { additionalWritePrefix: prefix } : {}),
    arm,
  };
}

function readArm(r: Reader, spec: Json, kind: string): SourceArm | undefined {
  const duration = (o: Json | undefined, key: string, path: string, required: boolean) => {
    const text = r.string(o, key, path, required);
    if (text === undefined) return undefined;
    const ms = parseDuration(text);
    if (ms === undefined || ms <= 0)
      return r.fail(path, `"${text}" is not a positive duration like 30s or 5m`);
    return { text, ms };
  };
  if (kind === "nodeLabels") {
    r.object(spec, "nodeLabels", "spec.nodeLabels");
    return { kind: "nodeLabels" };
  }
  if (kind === "configMap") {
    const cm = r.object(spec, "configMap", "spec.configMap", true);
    const ref = r.object(cm, "configMapRef", "spec.configMap.configMapRef", true);
    const namespace = r.string(ref, "namespace", "spec.configMap.configMapRef.namespace", true);
    const name = r.string(ref, "name", "spec.configMap.configMapRef.name", true);
    const key = r.string(cm, "key", "spec.configMap.key", true);
    const stale = duration(cm, "maxStaleness", "spec.configMap.maxStaleness", false);
    if (namespace === undefined || name === undefined || key === undefined) return undefined;
    return { kind: "configMap", namespace, name, key, ...(stale ? { maxStaleness: stale.text } : {}) };
  }
  const w = r.object(spec, "webhook", "spec.webhook", true);
  const url = r.string(w, "url", "spec.webhook.url", true);
  if (url !== undefined && !/^https:\/\/[^\s/?#]+/.test(url))
    r.fail("spec.webhook.url", `"${url}" is not an https:// URL`);
  const poll = duration(w, "pollInterval", "spec.webhook.pollInterval", true);
  const timeout = duration(w, "timeout", "spec.webhook.timeout", true);
  const stale = duration(w, "maxStaleness", "spec.webhook.maxStaleness", false);
  if (poll && timeout && timeout.ms > poll.ms) {
    r.fail("spec.webhook.timeout", `${timeout.text} must not exceed pollInterval ${poll.text}`);
  }
  const caBundle = r.string(w, "caBundle", "spec.webhook.caBundle");
  // The credential always comes from a Secret (the operator reads it; see src/operator/topology).
  const credential = r.object(w, "credential", "spec.webhook.credential", true);
  if (credential) {
    const arms = CREDENTIALS.filter((k) => isObject(credential[k]));
    if (arms.length !== 1 || Object.keys(credential).length !== 1) {
      r.fail("spec.webhook.credential", `exactly one of ${CREDENTIALS.join(", ")} is required`);
    }
  }
  if (url === undefined || !poll || !timeout) return undefined;
  return {
    kind: "webhook",
    url,
    pollInterval: poll.text,
    timeout: timeout.text,
    ...(stale ? { maxStaleness: stale.text } : {}),
    ...(caBundle !== undefined ? { caBundle } : {}),
  };
}

function readDeployment(
  r: Reader,
  doc: Json,
  namespace: string,
  name: string,
): DeploymentManifest | undefined {
  const spec = r.object(doc, "spec", "spec", true);
  const replicas = r.integer(spec, "replicas", "spec.replicas", 1, 10) ?? 1;
  const template = r.object(spec, "template", "spec.template", true);
  const tspec = r.object(template, "spec", "spec.template.spec", true);
  if (!tspec) return undefined;
  const tolerations = readTolerations(r, tspec, "spec.template.spec.tolerations");
  const engines: EngineGangSpec[] = [];
  for (const [i, e] of (r.list(tspec, "engines", "spec.template.spec.engines") ?? []).entries()) {
    const p = `spec.template.spec.engines[${i}]`;
    if (!isObject(e)) {
      r.fail(p, "expected an object");
      continue;
    }
    const ename = r.string(e, "name", `${p}.name`, true);
    const copies = r.integer(e, "copies", `${p}.copies`, 1, 64) ?? 1;
    const topo = r.object(e, "topology", `${p}.topology`);
    const level = r.string(topo, "requiredLevel", `${p}.topology.requiredLevel`);
    if (level !== undefined) {
      const err =
        level === HOSTNAME ? `${HOSTNAME} is implicit and cannot be requested` : labelKeyError(level);
      if (err) {
        r.fail(`${p}.topology.requiredLevel`, err);
        continue;
      }
    }
    let pods = 0;
    let gpus = 0;
    for (const [j, mem] of (r.list(e, "members", `${p}.members`) ?? []).entries()) {
      const mp = `${p}.members[${j}]`;
      if (!isObject(mem)) {
        r.fail(mp, "expected an object");
        continue;
      }
      const role = r.string(mem, "role", `${mp}.role`, true);
      const worker = r.object(mem, "worker", `${mp}.worker`);
      const nodes = role === "Worker" ? (r.integer(worker, "nodes", `${mp}.worker.nodes`, 1, 63) ?? 1) : 1;
      pods += nodes;
      const sel = r.object(mem, "nodeSelector", `${mp}.nodeSelector`);
      let memberGpus = 0;
      for (const [k, d] of (r.list(sel, "devices", `${mp}.nodeSelector.devices`) ?? []).entries()) {
        if (!isObject(d)) {
          r.fail(`${mp}.nodeSelector.devices[${k}]`, "expected an object");
          continue;
        }
        memberGpus += r.integer(d, "count", `${mp}.nodeSelector.devices[${k}].count`, 1, 64) ?? 1;
      }
      gpus = Math.max(gpus, memberGpus);
    }
    if (ename === undefined || level === undefined) continue;
    if (pods === 0) {
      r.fail(`${p}.members`, "at least one member is required");
      continue;
    }
    engines.push({
      name: ename,
      size: pods * copies,
      requests: { ...(gpus > 0 ? { [GPU_RESOURCE]: gpus * 1000 } : {}), pods: 1000 },
      requiredLevel: level,
    });
  }
  const created = (doc.metadata as Json).creationTimestamp;
  const createdAt = typeof created === "string" ? Date.parse(created) : Number.NaN;
  return {
    namespace,
    name,
    replicas,
    tolerations,
    engines,
    ...(Number.isFinite(createdAt) ? { createdAt } : {}),
  };
}

/** A gang of Pods sharing a Kueue pod group (unbound pods only; bound ones use capacity). */
export interface PodGang extends Gang {
  pods: PodManifest[];
}

/** Gangs from Kueue pod groups, by `<ns>/<group>`. */
export function podGangs(pods: readonly PodManifest[]): PodGang[] {
  const groups = new Map<string, PodManifest[]>();
  for (const p of pods) {
    const group = p.labels[POD_GROUP_LABEL];
    if (group === undefined || p.nodeName !== undefined || isFinished(p)) continue;
    const key = `${p.namespace}/${group}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => cmp(a, b))
    .map(([key, members]) => {
      members.sort((a, b) => cmp(a.name, b.name));
      const first = members[0]!;
      const total = first.annotations[POD_GROUP_TOTAL];
      // One PodSet per group: each resource at the most any member asks for.
      const requests: Record<string, number> = {};
      for (const p of members)
        for (const [k, v] of Object.entries(p.requests)) requests[k] = Math.max(requests[k] ?? 0, v);
      const required = first.annotations[REQUIRED_TOPOLOGY];
      const preferred = first.annotations[PREFERRED_TOPOLOGY];
      const topology: TopologyRequest =
        required !== undefined
          ? { mode: "required", level: required }
          : preferred !== undefined
            ? { mode: "preferred", level: preferred }
            : { mode: "unconstrained" };
      return {
        key,
        size: total !== undefined && /^[1-9]\d*$/.test(total) ? Number(total) : members.length,
        requests,
        topology,
        tolerations: first.tolerations,
        pods: members,
      };
    });
}

export function isFinished(p: PodManifest): boolean {
  return p.phase === "Succeeded" || p.phase === "Failed";
}

/** Engine gangs of one replica: `<ns>/<deployment>-<index>-<engine>`. */
export function engineGangs(d: DeploymentManifest, index: number): Gang[] {
  return d.engines.map((e) => ({
    key: `${d.namespace}/${d.name}-${index}-${e.name}`,
    size: e.size,
    requests: e.requests,
    topology: { mode: "required", level: e.requiredLevel },
    tolerations: d.tolerations,
  }));
}

/** Node free resources: allocatable minus what bound, unfinished pods request. */
export function nodeFree(
  nodes: readonly NodeManifest[],
  pods: readonly PodManifest[],
): Map<string, Resources> {
  const free = new Map<string, Record<string, number>>();
  for (const n of nodes) free.set(n.name, { ...n.allocatable });
  for (const p of pods) {
    if (p.nodeName === undefined || isFinished(p)) continue;
    const f = free.get(p.nodeName);
    if (!f) continue;
    for (const [k, v] of Object.entries(p.requests)) f[k] = (f[k] ?? 0) - v;
  }
  return free;
}
