// A ModelDeployment read for its gangs: per engine, how many pods (members × worker nodes ×
// copies), what each pod asks for, and the level the gang must fit in.
import { labelKeyError } from "../binding/index.js";
import { type FieldReader, isObject, type Json } from "../manifests/index.js";
import { HOSTNAME } from "./levels.js";
import { type DeploymentManifest, type EngineGangSpec, GPU_RESOURCE } from "./manifest-types.js";
import { readTolerations } from "./read-core-kinds.js";

export function readDeployment(
  r: FieldReader,
  doc: Json,
  namespace: string,
  name: string,
): DeploymentManifest | undefined {
  const spec = r.object(doc, "spec", "spec", true);
  const replicas = r.integer(spec, "replicas", "spec.replicas", { min: 1, max: 10 }) ?? 1;
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
    const ename = r.string(e, "name", `${p}.name`, { required: true });
    const copies = r.integer(e, "copies", `${p}.copies`, { min: 1, max: 64 }) ?? 1;
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
      const role = r.string(mem, "role", `${mp}.role`, { required: true });
      const worker = r.object(mem, "worker", `${mp}.worker`);
      const nodes =
        role === "Worker" ? (r.integer(worker, "nodes", `${mp}.worker.nodes`, { min: 1, max: 63 }) ?? 1) : 1;
      pods += nodes;
      const sel = r.object(mem, "nodeSelector", `${mp}.nodeSelector`);
      let memberGpus = 0;
      for (const [k, d] of (r.list(sel, "devices", `${mp}.nodeSelector.devices`) ?? []).entries()) {
        if (!isObject(d)) {
          r.fail(`${mp}.nodeSelector.devices[${k}]`, "expected an object");
          continue;
        }
        memberGpus +=
          r.integer(d, "count", `${mp}.nodeSelector.devices[${k}].count`, { min: 1, max: 64 }) ?? 1;
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
