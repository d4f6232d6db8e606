// Reading the dry run's inputs from parsed documents (plain JS values; no I/O): Nodes, bound
// and gang Pods, ConfigMaps, TopologySources, ModelDeployments and existing Kueue Topologies.
// Every problem is an issue naming the file, document, object and field; other kinds are
// skipped. See README.md for how pods and engines become gangs.
import { describe, FieldReader, isObject, type ManifestIssue, type RawDocument } from "../manifests/index.js";
import { cmp } from "./capacity.js";
import type { TopologyManifests } from "./manifest-types.js";
import { readNode, readPod } from "./read-core-kinds.js";
import { readDeployment } from "./read-deployment.js";
import { readSource } from "./read-source.js";

const KUBEMOOT = "kubemoot.ai/v1alpha1";

export function parseTopologyManifests(docs: readonly RawDocument[]): {
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
    const r = new FieldReader({ ...base, ...(kind ? { kind } : {}), ...(object ? { object } : {}) }, issues);
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
