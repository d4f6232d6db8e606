// The core/v1 kinds the dry run reads: Nodes (labels, taints, allocatable, readiness) and
// Pods (requests summed over containers, tolerations, the Kueue group annotations).
import { labelKeyError } from "../binding/index.js";
import { describe, type FieldReader, isObject, type Json } from "../manifests/index.js";
import { HOSTNAME } from "./levels.js";
import {
  type NodeManifest,
  POD_GROUP_TOTAL,
  type PodManifest,
  PREFERRED_TOPOLOGY,
  REQUIRED_TOPOLOGY,
} from "./manifest-types.js";
import { parseQuantity } from "./quantity.js";
import type { Taint, Toleration } from "./types.js";

export function readNode(r: FieldReader, doc: Json, name: string): NodeManifest | undefined {
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
    const key = r.string(t, "key", `${p}.key`, { required: true });
    const value = r.string(t, "value", `${p}.value`);
    const effect = r.string(t, "effect", `${p}.effect`, { required: true });
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

export function readResources(
  r: FieldReader,
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

export function readTolerations(r: FieldReader, parent: Json | undefined, path: string): Toleration[] {
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

export function readPod(
  r: FieldReader,
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
