// From file texts to typed objects: multi-document YAML (JSON is YAML too), each document
// either a kubemoot.ai/v1alpha1 object, provider state (a document with no apiVersion and no
// kind), or something else (a Namespace, a Deployment, …) that is skipped. No I/O here.
import { parseAllDocuments } from "yaml";
import {
  type Agent,
  applyProviderStates,
  type ClusterSnapshot,
  type CrewSchedulingPolicy,
  type Model,
  type ModelProvider,
  type MootArchetype,
} from "../../binding/index.js";
import type { ProviderState } from "../../core/index.js";
import { FieldReader, isObject, type ManifestIssue } from "../../manifests/index.js";
import { API_GROUP, API_VERSION, KINDS, type Kind, OTHER_KINDS, readMetadata, readObject } from "./kinds.js";
import { looksLikeProviderState, readProviderStates } from "./provider-state.js";

export interface SkippedDocument {
  file: string;
  document: number;
  apiVersion: string;
  kind: string;
}

export interface ManifestSet {
  models: Model[];
  providers: ModelProvider[];
  agents: Agent[];
  policies: CrewSchedulingPolicy[];
  archetypes: MootArchetype[];
  /** Provider state documents found among the manifests. */
  providerStates: ProviderState[];
  /** Documents of other API groups, ignored. */
  skipped: SkippedDocument[];
}

export interface ParsedManifests {
  set: ManifestSet;
  issues: ManifestIssue[];
}

export interface ManifestSource {
  file: string;
  text: string;
}

export function emptyManifestSet(): ManifestSet {
  return {
    models: [],
    providers: [],
    agents: [],
    policies: [],
    archetypes: [],
    providerStates: [],
    skipped: [],
  };
}

/** Parses every document of every source; issues name the file, document, object and field. */
export function parseManifests(sources: readonly ManifestSource[]): ParsedManifests {
  const set = emptyManifestSet();
  const issues: ManifestIssue[] = [];
  const seen = new Map<string, string>();
  for (const { file, text } of sources) {
    const docs = parseAllDocuments(text, { prettyErrors: true });
    const list = Array.isArray(docs) ? docs : [];
    list.forEach((doc, i) => {
      const document = i + 1;
      if (doc.errors.length > 0) {
        for (const e of doc.errors) {
          issues.push({ file, document, field: "", message: `YAML: ${e.message.split("\n")[0]}` });
        }
        return;
      }
      const value: unknown = doc.toJS({ maxAliasCount: 100 });
      if (value === null || value === undefined) return; // an empty document
      readDocument(file, document, value, set, issues, seen);
    });
  }
  return { set, issues };
}

function readDocument(
  file: string,
  document: number,
  value: unknown,
  set: ManifestSet,
  issues: ManifestIssue[],
  seen: Map<string, string>,
): void {
  const hasHeader = isObject(value) && (value.apiVersion !== undefined || value.kind !== undefined);
  if (!hasHeader) {
    const r = new FieldReader({ file, document, kind: "provider state" });
    if (looksLikeProviderState(value)) set.providerStates.push(...readProviderStates(r, value));
    else r.fail("", "not a Kubernetes object (no apiVersion and kind) and not provider state");
    issues.push(...r.issues);
    return;
  }
  const r = new FieldReader({ file, document });
  const apiVersion = r.string(value, "apiVersion", "apiVersion", { required: true });
  const kindText = r.string(value, "kind", "kind", { required: true });
  if (apiVersion === undefined || kindText === undefined) {
    issues.push(...r.issues);
    return;
  }
  if (
    apiVersion.split("/")[0] !== API_GROUP ||
    !apiVersion.includes("/") ||
    (apiVersion === API_VERSION && (OTHER_KINDS as readonly string[]).includes(kindText))
  ) {
    set.skipped.push({ file, document, apiVersion, kind: kindText });
    return;
  }
  if (apiVersion !== API_VERSION) {
    r.fail("apiVersion", `unsupported version "${apiVersion}", expected ${API_VERSION}`);
  } else if (!(KINDS as readonly string[]).includes(kindText)) {
    r.fail("kind", `unknown kind "${kindText}", expected one of ${KINDS.join(", ")}`);
  }
  if (r.issues.length > 0) {
    issues.push(...r.issues);
    return;
  }
  const kind = kindText as Kind;
  const clusterScoped = kind === "MootArchetype";
  const rawMeta = isObject(value.metadata) ? value.metadata : {};
  const name = typeof rawMeta.name === "string" ? rawMeta.name : undefined;
  const ns = typeof rawMeta.namespace === "string" && !clusterScoped ? rawMeta.namespace : undefined;
  const reader = new FieldReader({
    file,
    document,
    kind,
    ...(name !== undefined ? { object: ns !== undefined ? `${ns}/${name}` : name } : {}),
  });
  const meta = readMetadata(reader, value, clusterScoped);
  const obj = meta ? readObject(reader, kind, value, meta) : undefined;
  issues.push(...reader.issues);
  if (!obj || reader.issues.length > 0) return;

  const objectNs = "namespace" in obj.value ? obj.value.namespace : undefined;
  const key = `${kind}/${objectNs ?? ""}/${obj.value.name}`;
  const where = `${file} (document ${document})`;
  const first = seen.get(key);
  if (first) {
    issues.push({
      ...reader.doc,
      field: "metadata.name",
      message: `duplicate ${kind}; first defined in ${first}`,
    });
    return;
  }
  seen.set(key, where);
  switch (obj.kind) {
    case "Model":
      set.models.push(obj.value);
      break;
    case "ModelProvider":
      set.providers.push(obj.value);
      break;
    case "Agent":
      set.agents.push(obj.value);
      break;
    case "CrewSchedulingPolicy":
      set.policies.push(obj.value);
      break;
    case "MootArchetype":
      set.archetypes.push(obj.value);
      break;
  }
}

/** The binder's input: the manifests, with provider state overlaid (later states win). */
export function toSnapshot(set: ManifestSet, states: readonly ProviderState[] = []): ClusterSnapshot {
  return {
    models: set.models,
    providers: applyProviderStates(set.providers, [...set.providerStates, ...states]),
    agents: set.agents,
    policies: set.policies,
    archetypes: set.archetypes,
  };
}
