// The five kinds of kubemoot.ai/v1alpha1, read from parsed documents into the binder's typed
// objects. Types, ranges, enums and required fields are checked here (as the CRD schemas in
// chart/crds/ check them on a cluster); the meaning of selectors (operators, label syntax
// inside selectors) is the binder's to judge, so that an invalid selector is reported on the
// policy instead of rejecting the manifests.
import {
  type Agent,
  type AgentSchedulingStatus,
  type CrewSchedulingPolicy,
  type FairShareSpec,
  type LabelSelector,
  type LabelSelectorRequirement,
  type LoadedModel,
  labelKeyError,
  labelValueError,
  type Model,
  type ModelProvider,
  type MootArchetype,
  type PhaseAssignment,
  type PreferTerm,
  type SchedulingRule,
  type TopologySpread,
} from "../../binding/index.js";
import { BANDS, type Band, ENGINES, type Engine } from "../../core/index.js";
import { type FieldReader, isObject, type Json } from "../../manifests/index.js";

export const API_GROUP = "kubemoot.ai";
export const API_VERSION = "kubemoot.ai/v1alpha1";
export const KINDS = ["Model", "ModelProvider", "Agent", "CrewSchedulingPolicy", "MootArchetype"] as const;
export type Kind = (typeof KINDS)[number];
/** Kinds of our group that other readers own (fleet placement, topology): the binder skips them. */
export const OTHER_KINDS = [
  "ModelDeployment",
  "InferenceCluster",
  "InferenceClass",
  "ModelReplica",
  "TopologySource",
] as const;

/** Namespace of Agents and policies written without one (as kubectl would apply them). */
export const DEFAULT_NAMESPACE = "default";
export const DEFAULT_ARCHETYPE = "consent-3";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const ENDPOINT = /^https?:\/\/[^\s/?#]+(:\d+)?(\/[^\s]*)?$/;

export type KubemootObject =
  | { kind: "Model"; value: Model }
  | { kind: "ModelProvider"; value: ModelProvider }
  | { kind: "Agent"; value: Agent }
  | { kind: "CrewSchedulingPolicy"; value: CrewSchedulingPolicy }
  | { kind: "MootArchetype"; value: MootArchetype };

interface Meta {
  name: string;
  namespace?: string;
  labels: Record<string, string>;
}

/** metadata.name/namespace/labels; undefined when the name is unusable. */
export function readMetadata(r: FieldReader, doc: Json, clusterScoped: boolean): Meta | undefined {
  const meta = r.object(doc, "metadata", "metadata", true);
  if (!meta) return undefined;
  const name = r.string(meta, "name", "metadata.name", {
    required: true,
    pattern: DNS_SUBDOMAIN,
    patternText: "a DNS subdomain (lowercase alphanumerics, '-' and '.')",
  });
  const namespace = clusterScoped
    ? undefined
    : r.string(meta, "namespace", "metadata.namespace", {
        pattern: DNS_LABEL,
        patternText: "a DNS label (lowercase alphanumerics and '-')",
      });
  const labels = r.stringMap(meta, "labels", "metadata.labels") ?? {};
  for (const [k, v] of Object.entries(labels)) {
    const err = labelKeyError(k) ?? labelValueError(v);
    if (err) r.fail(`metadata.labels["${k}"]`, err);
  }
  if (name === undefined) return undefined;
  return { name, ...(namespace !== undefined ? { namespace } : {}), labels };
}

export function readObject(r: FieldReader, kind: Kind, doc: Json, meta: Meta): KubemootObject | undefined {
  switch (kind) {
    case "Model":
      return wrap("Model", readModel(r, doc, meta));
    case "ModelProvider":
      return wrap("ModelProvider", readProvider(r, doc, meta));
    case "Agent":
      return wrap("Agent", readAgent(r, doc, meta));
    case "CrewSchedulingPolicy":
      return wrap("CrewSchedulingPolicy", readPolicy(r, doc, meta));
    case "MootArchetype":
      return wrap("MootArchetype", readArchetype(r, doc, meta));
  }
}

function wrap<K extends Kind>(kind: K, value: unknown): KubemootObject | undefined {
  return value === undefined ? undefined : ({ kind, value } as KubemootObject);
}

export const LATENCY_CLASSES = ["low", "medium", "high"] as const;

function readModel(r: FieldReader, doc: Json, meta: Meta): Model | undefined {
  const latency = meta.labels.latencyClass;
  if (latency !== undefined && !(LATENCY_CLASSES as readonly string[]).includes(latency)) {
    r.fail(
      'metadata.labels["latencyClass"]',
      `expected one of ${LATENCY_CLASSES.join(", ")}, got "${latency}"`,
    );
  }
  const spec = r.object(doc, "spec", "spec", true);
  if (!spec) return undefined;
  const model = r.string(spec, "model", "spec.model", { required: true });
  const providerRef = r.string(spec, "providerRef", "spec.providerRef", {
    required: true,
    pattern: DNS_SUBDOMAIN,
    patternText: "a ModelProvider name",
  });
  const vramMib = r.integer(spec, "vramMib", "spec.vramMib");
  const status = r.object(doc, "status", "status");
  const ready = r.boolean(status, "ready", "status.ready");
  if (model === undefined || providerRef === undefined) return undefined;
  return {
    ...scope(meta),
    name: meta.name,
    labels: meta.labels,
    spec: { model, providerRef, ...(vramMib !== undefined ? { vramMib } : {}) },
    // Files carry no controller: a Model without status is taken as ready.
    status: { ready: ready ?? true },
  };
}

function readProvider(r: FieldReader, doc: Json, meta: Meta): ModelProvider | undefined {
  const spec = r.object(doc, "spec", "spec", true);
  if (!spec) return undefined;
  const type = r.string(spec, "type", "spec.type", { required: true, oneOf: ["ollama"] });
  const engine = r.string(spec, "engine", "spec.engine", { oneOf: ENGINES }) as Engine | undefined;
  const endpoint = r.string(spec, "endpoint", "spec.endpoint", {
    required: true,
    pattern: ENDPOINT,
    patternText: "an http:// or https:// URL",
  });
  const sched = r.object(spec, "scheduling", "spec.scheduling");
  const weight = r.integer(sched, "weight", "spec.scheduling.weight");
  const memoryMiB = r.integer(sched, "memoryMiB", "spec.scheduling.memoryMiB");
  const status = r.object(doc, "status", "status");
  const ready = r.boolean(status, "ready", "status.ready");
  const cap = r.object(status, "capacity", "status.capacity");
  const capacity = cap ? readCapacity(r, cap) : undefined;
  if (type === undefined || endpoint === undefined) return undefined;
  return {
    ...scope(meta),
    name: meta.name,
    labels: meta.labels,
    spec: {
      type,
      ...(engine !== undefined ? { engine } : {}),
      endpoint,
      ...(weight !== undefined || memoryMiB !== undefined
        ? {
            scheduling: {
              ...(weight !== undefined ? { weight } : {}),
              ...(memoryMiB !== undefined ? { memoryMiB } : {}),
            },
          }
        : {}),
    },
    status: { ready: ready ?? true, ...(capacity ? { capacity } : {}) },
  };
}

function readCapacity(r: FieldReader, cap: Json): NonNullable<ModelProvider["status"]["capacity"]> {
  const out: Record<string, unknown> = {};
  for (const key of ["vramTotalMiB", "vramUsedMiB", "maxParallel", "agentCount", "contextLength"]) {
    const v = r.integer(cap, key, `status.capacity.${key}`);
    if (v !== undefined) out[key] = v;
  }
  const loaded = r.array(
    cap,
    "loadedModels",
    "status.capacity.loadedModels",
    (x, p): LoadedModel | undefined => {
      if (!isObject(x)) return r.fail(p, "expected an object");
      const name = r.string(x, "name", `${p}.name`, { required: true });
      const sizeMiB = r.integer(x, "sizeMiB", `${p}.sizeMiB`);
      const contextLength = r.integer(x, "contextLength", `${p}.contextLength`);
      if (name === undefined) return undefined;
      return {
        name,
        ...(sizeMiB !== undefined ? { sizeMiB } : {}),
        ...(contextLength !== undefined ? { contextLength } : {}),
      };
    },
  );
  if (loaded) out.loadedModels = loaded;
  return out;
}

function readAgent(r: FieldReader, doc: Json, meta: Meta): Agent | undefined {
  const spec = r.object(doc, "spec", "spec", true);
  if (!spec) return undefined;
  const capabilities = r.stringArray(spec, "capabilities", "spec.capabilities") ?? [];
  const discussRole = r.string(spec, "discussRole", "spec.discussRole");
  const status = r.object(doc, "status", "status");
  const sched = r.object(status, "scheduling", "status.scheduling");
  const scheduling = sched ? readScheduling(r, sched) : undefined;
  return {
    namespace: meta.namespace ?? DEFAULT_NAMESPACE,
    name: meta.name,
    labels: meta.labels,
    spec: { capabilities, ...(discussRole !== undefined ? { discussRole } : {}) },
    ...(scheduling ? { status: { scheduling } } : {}),
  };
}

/** The current binding, read for hysteresis. */
function readScheduling(r: FieldReader, sched: Json): AgentSchedulingStatus {
  const assignment = (o: Json | undefined, path: string): Partial<PhaseAssignment> => {
    const out: Partial<PhaseAssignment> = {};
    for (const key of ["model", "modelRef", "provider", "endpoint"] as const) {
      const v = r.string(o, key, `${path}${key}`);
      if (v !== undefined) out[key] = v;
    }
    return out;
  };
  const triageObj = r.object(sched, "triage", "status.scheduling.triage");
  const triage = assignment(triageObj, "status.scheduling.triage.");
  return {
    ...assignment(sched, "status.scheduling."),
    ...(triage.provider !== undefined && triage.model !== undefined && triage.endpoint !== undefined
      ? { triage: triage as PhaseAssignment }
      : {}),
  };
}

function readSelector(r: FieldReader, value: unknown, path: string): LabelSelector | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) return r.fail(path, "expected a label selector object");
  const matchLabels = r.stringMap(value, "matchLabels", `${path}.matchLabels`);
  const matchExpressions = r.array(
    value,
    "matchExpressions",
    `${path}.matchExpressions`,
    (x, p): LabelSelectorRequirement | undefined => {
      if (!isObject(x)) return r.fail(p, "expected an object");
      const key = r.string(x, "key", `${p}.key`, { required: true });
      const operator = r.string(x, "operator", `${p}.operator`, { required: true });
      const values = r.stringArray(x, "values", `${p}.values`);
      if (key === undefined || operator === undefined) return undefined;
      return { key, operator, ...(values !== undefined ? { values } : {}) };
    },
  );
  return {
    ...(matchLabels !== undefined ? { matchLabels } : {}),
    ...(matchExpressions !== undefined ? { matchExpressions } : {}),
  };
}

function readPolicy(r: FieldReader, doc: Json, meta: Meta): CrewSchedulingPolicy | undefined {
  const spec = r.object(doc, "spec", "spec", true);
  if (!spec) return undefined;
  const crewRef = r.string(spec, "crewRef", "spec.crewRef", { required: true });
  const archetypeRef = r.string(spec, "archetypeRef", "spec.archetypeRef") ?? DEFAULT_ARCHETYPE;
  const qualityBias = r.stringMap(spec, "qualityBias", "spec.qualityBias") ?? {};
  const rules =
    r.array(spec, "rules", "spec.rules", (x, p): SchedulingRule | undefined => {
      if (!isObject(x)) return r.fail(p, "expected an object");
      const phase = r.string(x, "phase", `${p}.phase`, { required: true });
      const require = readSelector(r, x.require, `${p}.require`);
      const prefer = r.array(x, "prefer", `${p}.prefer`, (t, tp): PreferTerm | undefined => {
        if (!isObject(t)) return r.fail(tp, "expected an object");
        const weight = r.integer(t, "weight", `${tp}.weight`, { required: true });
        if (t.selector === undefined || t.selector === null) return r.fail(`${tp}.selector`, "required");
        const selector = readSelector(r, t.selector, `${tp}.selector`);
        if (weight === undefined || selector === undefined) return undefined;
        return { weight, selector };
      });
      if (phase === undefined) return undefined;
      return { phase, ...(require ? { require } : {}), ...(prefer ? { prefer } : {}) };
    }) ?? [];
  const ts = r.object(spec, "topologySpread", "spec.topologySpread");
  let topologySpread: TopologySpread | undefined;
  if (ts) {
    const whenUnsatisfiable = r.string(ts, "whenUnsatisfiable", "spec.topologySpread.whenUnsatisfiable", {
      oneOf: ["ScheduleAnyway", "DoNotSchedule"],
    });
    const topologyKey = r.string(ts, "topologyKey", "spec.topologySpread.topologyKey");
    if (topologyKey !== undefined && topologyKey !== "provider" && labelKeyError(topologyKey)) {
      r.fail("spec.topologySpread.topologyKey", labelKeyError(topologyKey)!);
    }
    const phaseKeys = r.stringArray(ts, "phaseKeys", "spec.topologySpread.phaseKeys");
    topologySpread = {
      whenUnsatisfiable: (whenUnsatisfiable ?? "ScheduleAnyway") as TopologySpread["whenUnsatisfiable"],
      topologyKey: topologyKey ?? "provider",
      phaseKeys: phaseKeys ?? ["mulling", "triage"],
    };
  }
  const fairShare = readFairShare(r, r.object(spec, "fairShare", "spec.fairShare"));
  if (crewRef === undefined) return undefined;
  return {
    namespace: meta.namespace ?? DEFAULT_NAMESPACE,
    name: meta.name,
    spec: {
      crewRef,
      archetypeRef,
      qualityBias,
      rules,
      ...(topologySpread ? { topologySpread } : {}),
      ...(fairShare ? { fairShare } : {}),
    },
  };
}

/** `spec.fairShare` (docs/rules/fairness.md §2): a weight ≥ 1 and the crew's bands. */
function readFairShare(r: FieldReader, fs: Json | undefined): FairShareSpec | undefined {
  if (!fs) return undefined;
  const weight = r.integer(fs, "weight", "spec.fairShare.weight", { min: 1 });
  const band = (key: string) =>
    r.string(fs, key, `spec.fairShare.${key}`, { oneOf: BANDS }) as Band | undefined;
  const priority = band("priority");
  const maxPriority = band("maxPriority");
  return {
    ...(weight !== undefined ? { weight } : {}),
    ...(priority !== undefined ? { priority } : {}),
    ...(maxPriority !== undefined ? { maxPriority } : {}),
  };
}

function readArchetype(r: FieldReader, doc: Json, meta: Meta): MootArchetype | undefined {
  const spec = r.object(doc, "spec", "spec", true);
  if (!spec) return undefined;
  const description = r.string(spec, "description", "spec.description");
  const seen = new Set<string>();
  const phases = r.array(
    spec,
    "phases",
    "spec.phases",
    (x, p) => {
      if (!isObject(x)) return r.fail(p, "expected an object");
      const name = r.string(x, "name", `${p}.name`, { required: true });
      const desc = r.string(x, "description", `${p}.description`);
      if (name === undefined) return undefined;
      if (seen.has(name)) return r.fail(`${p}.name`, `phase ${name} is declared twice`);
      seen.add(name);
      return { name, ...(desc !== undefined ? { description: desc } : {}) };
    },
    { required: true, minItems: 1 },
  );
  if (!phases) return undefined;
  return {
    name: meta.name,
    spec: { ...(description !== undefined ? { description } : {}), phases },
  };
}

function scope(meta: Meta): { namespace?: string } {
  return meta.namespace !== undefined ? { namespace: meta.namespace } : {};
}
