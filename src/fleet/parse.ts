// Plain JS values (parsed YAML/JSON documents) to the fleet's typed objects, with issues that
// name the file, document, object and field. Ranges are docs/rules/fleet.md's and match the CRDs in
// chart/crds/. Pure: the CLI reads the files; the operator hands over API objects.
import {
  type DocumentRef,
  FieldReader,
  isObject,
  type Json,
  type ManifestIssue,
} from "../manifests/index.js";
import { parseQuantity } from "../quantity/index.js";
import { API_VERSION, CLUSTER_LABEL, DEPLOYMENT_LABEL, REPLICA_INDEX_LABEL } from "./dry-run.js";
import type {
  AttributeValue,
  Device,
  DeviceRequest,
  Engine,
  FleetInput,
  GpuPool,
  InferenceClass,
  InferenceCluster,
  Member,
  ModelDeployment,
  ModelReplica,
  ReplicaEngine,
  ReplicaMember,
  Taint,
  Toleration,
} from "./types.js";

export const FLEET_KINDS = ["ModelDeployment", "InferenceCluster", "InferenceClass", "ModelReplica"] as const;

export interface FleetDocument {
  file: string;
  /** 1-based position in the file. */
  document: number;
  value: unknown;
}

export interface ParsedFleet {
  input: Required<FleetInput>;
  issues: ManifestIssue[];
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const NAME_TEXT = "a DNS label (lowercase letters, digits and '-')";
const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"] as const;
const TOLERATION_EFFECTS = ["NoSchedule", "NoExecute"] as const;
const ROLES = ["Standalone", "Leader", "Worker"] as const;

/** Parses the fleet's kinds out of `docs`; documents of other kinds or groups are skipped. */
export function parseFleetDocuments(docs: readonly FleetDocument[]): ParsedFleet {
  const input: Required<FleetInput> = { deployments: [], clusters: [], classes: [], replicas: [] };
  const out = input as {
    deployments: ModelDeployment[];
    clusters: InferenceCluster[];
    classes: InferenceClass[];
    replicas: ModelReplica[];
  };
  const issues: ManifestIssue[] = [];
  for (const doc of docs) {
    const v = doc.value;
    if (!isObject(v) || v.apiVersion !== API_VERSION) continue;
    const kind = v.kind;
    if (typeof kind !== "string" || !(FLEET_KINDS as readonly string[]).includes(kind)) continue;
    const meta = isObject(v.metadata) ? v.metadata : {};
    const name = typeof meta.name === "string" ? meta.name : undefined;
    const namespaced = kind === "ModelDeployment" || kind === "ModelReplica";
    const namespace = typeof meta.namespace === "string" && meta.namespace ? meta.namespace : "default";
    const ref: DocumentRef = {
      file: doc.file,
      document: doc.document,
      kind,
      ...(name ? { object: namespaced ? `${namespace}/${name}` : name } : {}),
    };
    const r = new FieldReader(ref);
    r.string(meta, "name", "metadata.name", { required: true, pattern: NAME, patternText: NAME_TEXT });
    if (name !== undefined && NAME.test(name)) {
      if (kind === "ModelDeployment") push(out.deployments, readDeployment(r, v, namespace, name));
      else if (kind === "InferenceCluster") push(out.clusters, readCluster(r, v, name));
      else if (kind === "InferenceClass") push(out.classes, readClass(r, v, name));
      else push(out.replicas, readReplica(r, v, namespace, name));
    }
    issues.push(...r.issues);
  }
  return { input, issues };
}

function push<T>(list: T[], item: T | undefined): void {
  if (item !== undefined) list.push(item);
}

/** An integer in [min, max]; absent gives `fallback`. */
function intIn(
  r: FieldReader,
  parent: Json | undefined,
  key: string,
  path: string,
  min: number,
  max: number,
  fallback?: number,
): number | undefined {
  const v = r.integer(parent, key, path, { min, required: fallback === undefined });
  if (v === undefined) return parent?.[key] === undefined ? fallback : undefined;
  if (v > max) return r.fail(path, `expected an integer in ${min}..${max}, got ${v}`);
  return v;
}

function readDeployment(
  r: FieldReader,
  v: Json,
  namespace: string,
  name: string,
): ModelDeployment | undefined {
  const before = r.issues.length;
  const spec = r.object(v, "spec", "spec", true);
  const replicas = intIn(r, spec, "replicas", "spec.replicas", 1, 10, 1);
  const template = r.object(spec, "template", "spec.template", true);
  const ts = r.object(template, "spec", "spec.template.spec", true);
  const base = "spec.template.spec";
  const cs = r.object(ts, "clusterSelector", `${base}.clusterSelector`);
  const clusterSelector = r.stringMap(cs, "matchLabels", `${base}.clusterSelector.matchLabels`) ?? {};
  const tolerations =
    r.array(ts, "tolerations", `${base}.tolerations`, (x, p) => readToleration(r, x, p)) ?? [];
  const engines = r.array(ts, "engines", `${base}.engines`, (x, p) => readEngine(r, x, p), {
    required: true,
    minItems: 1,
  });
  if (engines && engines.length > 8)
    r.fail(`${base}.engines`, `expected at most 8 engines, got ${engines.length}`);
  if (engines)
    duplicates(
      r,
      engines.map((e) => e.name),
      `${base}.engines`,
      "engine name",
    );
  if (r.issues.length > before || !engines || replicas === undefined) return undefined;
  return { namespace, name, replicas, clusterSelector, tolerations, engines };
}

function duplicates(r: FieldReader, names: readonly string[], path: string, what: string): void {
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (seen.has(n)) r.fail(`${path}[${i}].name`, `duplicate ${what} "${n}"`);
    seen.add(n);
  });
}

function readToleration(r: FieldReader, x: unknown, p: string): Toleration | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const key = r.string(x, "key", `${p}.key`);
  const operator = r.string(x, "operator", `${p}.operator`, { oneOf: ["Exists", "Equal"] }) ?? "Equal";
  const value = r.string(x, "value", `${p}.value`);
  const effect = r.string(x, "effect", `${p}.effect`, { oneOf: TOLERATION_EFFECTS });
  // Kubernetes' own validation: a keyless toleration must be Exists; Exists carries no value.
  if (!key && operator !== "Exists") return r.fail(`${p}.operator`, "must be Exists when key is empty");
  if (operator === "Exists" && value) return r.fail(`${p}.value`, "must be empty when operator is Exists");
  return {
    ...(key ? { key } : {}),
    operator: operator as Toleration["operator"],
    ...(value !== undefined ? { value } : {}),
    ...(effect ? { effect: effect as Toleration["effect"] } : {}),
  };
}

function readEngine(r: FieldReader, x: unknown, p: string): Engine | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const before = r.issues.length;
  const name = r.string(x, "name", `${p}.name`, { required: true, pattern: NAME, patternText: NAME_TEXT });
  const copies = intIn(r, x, "copies", `${p}.copies`, 1, 64, 1);
  const topology = r.object(x, "topology", `${p}.topology`);
  const requiredLevel = r.string(topology, "requiredLevel", `${p}.topology.requiredLevel`, {
    required: !!topology,
  });
  if (requiredLevel === "kubernetes.io/hostname") {
    // docs/rules/topology.md: the hostname level is implicit in every hierarchy and refused here.
    r.fail(
      `${p}.topology.requiredLevel`,
      "kubernetes.io/hostname is implicit and cannot be required; name a coarser level",
    );
  }
  const members = r.array(x, "members", `${p}.members`, (m, mp) => readMember(r, m, mp), {
    required: true,
    minItems: 1,
  });
  if (members && r.issues.length === before) {
    const roles = members.map((m) => m.role);
    const standalone = roles.filter((role) => role === "Standalone").length;
    const leaders = roles.filter((role) => role === "Leader").length;
    const workers = roles.filter((role) => role === "Worker").length;
    const ok =
      (standalone === 1 && roles.length === 1) || (standalone === 0 && leaders === 1 && workers >= 1);
    if (!ok)
      r.fail(
        `${p}.members`,
        `expected exactly one Standalone, or one Leader plus Workers; got ${roles.join(", ")}`,
      );
    if (!members.some((m) => m.devices)) r.fail(`${p}.members`, "at least one member needs a nodeSelector");
  }
  if (r.issues.length > before || !name || copies === undefined || !members) return undefined;
  return { name, copies, ...(requiredLevel ? { requiredLevel } : {}), members };
}

function readMember(r: FieldReader, x: unknown, p: string): Member | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const before = r.issues.length;
  const role = r.string(x, "role", `${p}.role`, { required: true, oneOf: ROLES }) as
    | Member["role"]
    | undefined;
  const worker = r.object(x, "worker", `${p}.worker`);
  const workerNodes =
    role === "Worker" ? intIn(r, worker, "nodes", `${p}.worker.nodes`, 1, 63, 1) : undefined;
  if (role && role !== "Worker" && worker) r.fail(`${p}.worker`, `only a Worker has worker settings`);
  const ns = r.object(x, "nodeSelector", `${p}.nodeSelector`);
  const devices = ns
    ? r.array(ns, "devices", `${p}.nodeSelector.devices`, (d, dp) => readRequest(r, d, dp), {
        required: true,
        minItems: 1,
      })
    : undefined;
  if (devices && devices.length > 16) r.fail(`${p}.nodeSelector.devices`, `expected at most 16 requests`);
  if (devices)
    duplicates(
      r,
      devices.map((d) => d.name),
      `${p}.nodeSelector.devices`,
      "request name",
    );
  if (r.issues.length > before || !role) return undefined;
  return { role, ...(workerNodes !== undefined ? { workerNodes } : {}), ...(devices ? { devices } : {}) };
}

function readRequest(r: FieldReader, x: unknown, p: string): DeviceRequest | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const before = r.issues.length;
  const name = r.string(x, "name", `${p}.name`, { required: true, pattern: NAME, patternText: NAME_TEXT });
  const count = intIn(r, x, "count", `${p}.count`, 1, 64, 1);
  const selectors = r.array(x, "selectors", `${p}.selectors`, (s, sp) => readSelector(r, s, sp)) ?? [];
  if (r.issues.length > before || !name || count === undefined) return undefined;
  return { name, count, selectors };
}

function readSelector(r: FieldReader, x: unknown, p: string): string | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object with a cel expression");
  return r.string(x, "cel", `${p}.cel`, { required: true });
}

function readCluster(r: FieldReader, v: Json, name: string): InferenceCluster | undefined {
  const before = r.issues.length;
  const meta = r.object(v, "metadata", "metadata");
  const labels = r.stringMap(meta, "labels", "metadata.labels") ?? {};
  const spec = r.object(v, "spec", "spec");
  const taints = r.array(spec, "taints", "spec.taints", (x, p) => readTaint(r, x, p)) ?? [];
  const fabricLevel = r.string(spec, "fabricLevel", "spec.fabricLevel");
  const status = r.object(v, "status", "status");
  const conditions =
    r.array(status, "conditions", "status.conditions", (x, p) =>
      isObject(x) ? x : r.fail(p, "expected an object"),
    ) ?? [];
  const ready = conditions.some((c) => c.type === "Ready" && c.status === "True");
  const gateway = r.object(status, "gateway", "status.gateway");
  const gatewayAddress = r.string(gateway, "address", "status.gateway.address");
  const pools = r.array(status, "gpuPools", "status.gpuPools", (x, p) => readPool(r, x, p)) ?? [];
  if (pools.length > 8) r.fail("status.gpuPools", `expected at most 8 pools, got ${pools.length}`);
  duplicates(
    r,
    pools.map((p) => p.name),
    "status.gpuPools",
    "pool name",
  );
  if (r.issues.length > before) return undefined;
  return {
    name,
    labels,
    taints,
    ready,
    ...(gatewayAddress ? { gatewayAddress } : {}),
    ...(fabricLevel ? { fabricLevel } : {}),
    pools,
  };
}

function readTaint(r: FieldReader, x: unknown, p: string): Taint | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const key = r.string(x, "key", `${p}.key`, { required: true });
  const value = r.string(x, "value", `${p}.value`);
  const effect = r.string(x, "effect", `${p}.effect`, { required: true, oneOf: EFFECTS });
  if (!key || !effect) return undefined;
  return { key, ...(value !== undefined ? { value } : {}), effect: effect as Taint["effect"] };
}

function readPool(r: FieldReader, x: unknown, p: string): GpuPool | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const before = r.issues.length;
  const name = r.string(x, "name", `${p}.name`, { required: true, pattern: NAME, patternText: NAME_TEXT });
  const nodes = r.integer(x, "nodes", `${p}.nodes`, { required: true });
  const observedNodes = r.integer(x, "observedNodes", `${p}.observedNodes`);
  const report = r.array(x, "nodesByFreeDevices", `${p}.nodesByFreeDevices`, (b, bp) => {
    if (!isObject(b)) return r.fail(bp, "expected an object");
    const free = r.object(b, "freeDevices", `${bp}.freeDevices`, true);
    const freeDevices: Record<string, number> = {};
    for (const driver of Object.keys(free ?? {})) {
      const n = r.integer(free, driver, `${bp}.freeDevices["${driver}"]`, { required: true });
      if (n !== undefined) freeDevices[driver] = n;
    }
    const n = r.integer(b, "nodes", `${bp}.nodes`, { required: true });
    return n === undefined ? undefined : { freeDevices, nodes: n };
  });
  const devices = r.array(x, "devices", `${p}.devices`, (d, dp) => readDevice(r, d, dp)) ?? [];
  const inferenceClassName = r.string(x, "inferenceClassName", `${p}.inferenceClassName`);
  const topology = r.stringMap(x, "topology", `${p}.topology`);
  if (r.issues.length > before || !name || nodes === undefined) return undefined;
  return {
    name,
    nodes,
    ...(observedNodes !== undefined ? { observedNodes } : {}),
    ...(report ? { nodesByFreeDevices: report } : {}),
    devices,
    ...(inferenceClassName ? { inferenceClassName } : {}),
    ...(topology ? { topology } : {}),
  };
}

function readDevice(r: FieldReader, x: unknown, p: string): Device | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const before = r.issues.length;
  const name = r.string(x, "name", `${p}.name`, { required: true });
  const claim = (r.string(x, "claim", `${p}.claim`, { oneOf: ["DRA", "Synthetic"] }) ??
    "DRA") as Device["claim"];
  const driver = r.string(x, "driver", `${p}.driver`, { required: true });
  const deviceClassName =
    r.string(x, "deviceClassName", `${p}.deviceClassName`, { required: claim === "DRA" }) ?? "";
  // A published count that is missing or negative is 0: such a device never matches.
  const raw = x.count;
  let count = 0;
  if (raw !== undefined && raw !== null) {
    if (typeof raw !== "number" || !Number.isSafeInteger(raw)) r.fail(`${p}.count`, "expected an integer");
    else count = Math.max(0, raw);
  }
  const attributes: Record<string, AttributeValue> = {};
  const attrs = r.object(x, "attributes", `${p}.attributes`);
  for (const [k, a] of Object.entries(attrs ?? {})) {
    const ap = `${p}.attributes["${k}"]`;
    const value = isObject(a) ? readAttribute(a) : undefined;
    if (!value) r.fail(ap, "expected exactly one of string, version, bool or int");
    else attributes[k] = value;
  }
  const capacity: Record<string, string> = {};
  const caps = r.object(x, "capacity", `${p}.capacity`);
  for (const [k, c] of Object.entries(caps ?? {})) {
    const cp = `${p}.capacity["${k}"].value`;
    const value = isObject(c) ? c.value : undefined;
    const text = value;
    if (typeof text !== "string" || !parseQuantity(text))
      r.fail(cp, `expected a quantity (e.g. 80Gi), got ${JSON.stringify(value)}`);
    else capacity[k] = text;
  }
  if (r.issues.length > before || !name || !driver) return undefined;
  return { name, claim, driver, deviceClassName, count, attributes, capacity };
}

function readAttribute(a: Json): AttributeValue | undefined {
  const keys = Object.keys(a);
  if (keys.length !== 1) return undefined;
  const [k] = keys;
  const v = a[k!];
  if (k === "string" && typeof v === "string") return { string: v };
  if (k === "version" && typeof v === "string") return { version: v };
  if (k === "bool" && typeof v === "boolean") return { bool: v };
  if (k === "int" && typeof v === "number" && Number.isSafeInteger(v)) return { int: v };
  return undefined;
}

function readClass(r: FieldReader, v: Json, name: string): InferenceClass | undefined {
  const before = r.issues.length;
  const spec = r.object(v, "spec", "spec", true);
  const devices =
    r.array(spec, "devices", "spec.devices", (d, dp) => readDevice(r, d, dp), { required: true }) ?? [];
  if (r.issues.length > before) return undefined;
  return { name, devices };
}

function readReplica(r: FieldReader, v: Json, namespace: string, name: string): ModelReplica | undefined {
  const before = r.issues.length;
  const meta = r.object(v, "metadata", "metadata");
  const labels = r.stringMap(meta, "labels", "metadata.labels") ?? {};
  const spec = r.object(v, "spec", "spec", true);
  const clusterName =
    r.string(spec, "clusterName", "spec.clusterName", { required: !labels[CLUSTER_LABEL] }) ??
    labels[CLUSTER_LABEL];
  const indexText = labels[REPLICA_INDEX_LABEL];
  let index: number | undefined;
  if (indexText === undefined) r.fail(`metadata.labels["${REPLICA_INDEX_LABEL}"]`, "required");
  else if (!/^(0|[1-9]\d{0,8})$/.test(indexText)) {
    r.fail(
      `metadata.labels["${REPLICA_INDEX_LABEL}"]`,
      `expected a non-negative integer, got "${indexText}"`,
    );
  } else index = Number(indexText);
  const engines =
    r.array(spec, "engines", "spec.engines", (e, ep) => readReplicaEngine(r, e, ep), { required: true }) ??
    [];
  const status = r.object(v, "status", "status");
  const conditions =
    r.array(status, "conditions", "status.conditions", (x, p) =>
      isObject(x) ? x : r.fail(p, "expected an object"),
    ) ?? [];
  const podsScheduled = conditions.some((c) => c.type === "ModelPodsScheduled" && c.status === "True");
  if (r.issues.length > before || !clusterName || index === undefined) return undefined;
  const deployment = labels[DEPLOYMENT_LABEL];
  return {
    namespace,
    name,
    ...(deployment ? { deployment } : {}),
    clusterName,
    index,
    engines,
    podsScheduled,
  };
}

function readReplicaEngine(r: FieldReader, x: unknown, p: string): ReplicaEngine | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const name = r.string(x, "name", `${p}.name`, { required: true });
  const copies = intIn(r, x, "copies", `${p}.copies`, 1, 64, 1);
  const members =
    r.array(x, "members", `${p}.members`, (m, mp) => readReplicaMember(r, m, mp), { required: true }) ?? [];
  if (!name || copies === undefined) return undefined;
  return { name, copies, members };
}

function readReplicaMember(r: FieldReader, x: unknown, p: string): ReplicaMember | undefined {
  if (!isObject(x)) return r.fail(p, "expected an object");
  const role = r.string(x, "role", `${p}.role`, { required: true, oneOf: ROLES }) as
    | ReplicaMember["role"]
    | undefined;
  const worker = r.object(x, "worker", `${p}.worker`);
  const workerNodes =
    role === "Worker" ? intIn(r, worker, "nodes", `${p}.worker.nodes`, 1, 63, 1) : undefined;
  const nodePoolName = r.string(x, "nodePoolName", `${p}.nodePoolName`, { required: true });
  const deviceRequests =
    r.array(x, "deviceRequests", `${p}.deviceRequests`, (d, dp) => {
      if (!isObject(d)) return r.fail(dp, "expected an object");
      const name = r.string(d, "name", `${dp}.name`, { required: true });
      const deviceClassName = r.string(d, "deviceClassName", `${dp}.deviceClassName`, { required: true });
      const count = intIn(r, d, "count", `${dp}.count`, 1, 64, 1);
      const selectors = r.array(d, "selectors", `${dp}.selectors`, (s, sp) => readSelector(r, s, sp)) ?? [];
      if (!name || !deviceClassName || count === undefined) return undefined;
      return { name, deviceClassName, count, selectors };
    }) ?? [];
  if (!role || !nodePoolName) return undefined;
  return { role, ...(workerNodes !== undefined ? { workerNodes } : {}), nodePoolName, deviceRequests };
}
