// What fleet placement wants the cluster to hold, as API objects (pure): the ModelReplicas of
// every placement (pool-pinned, owned by their deployment), each deployment's status, and a
// ModelProvider per replica that is Ready with an address — so that a placed, serving engine
// becomes a provider for call-time scheduling.
import {
  CLUSTER_LABEL,
  DEPLOYMENT_LABEL,
  type FleetResult,
  parseFleetDocuments,
  placeFleet,
  REPLICA_INDEX_LABEL,
  replicaObject,
} from "../../fleet/index.js";
import type { ManifestIssue } from "../../manifests/index.js";

export const API_VERSION = "kubemoot.ai/v1alpha1";
/** Marks the ModelProviders fleet placement writes (and may therefore delete). */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY_FLEET = "kubemoot-fleet";
/** Engine API of the providers a replica serves when its status does not say (`status.providerType`). */
export const DEFAULT_PROVIDER_TYPE = "ollama";

/** An API object as read (a manifest, or the API server's JSON). */
export interface RawObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  spec?: unknown;
  status?: unknown;
  [k: string]: unknown;
}

export interface FleetObjects {
  deployments: readonly RawObject[];
  clusters: readonly RawObject[];
  classes: readonly RawObject[];
  replicas: readonly RawObject[];
}

export interface FleetCondition {
  type: string;
  status: "True" | "False";
  reason: string;
  message: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface DeploymentStatus {
  namespace: string;
  name: string;
  status: { replicas: number; conditions: FleetCondition[] };
  /** Selector compile errors, naming the field (also in the condition's message). */
  errors: string[];
}

export interface DesiredFleet {
  result: FleetResult;
  /** ModelReplicas to hold, keyed `<ns>/<name>`. */
  replicas: Map<string, RawObject>;
  /** Fleet-written ModelProviders to hold, keyed `<ns>/<name>`. */
  providers: Map<string, RawObject>;
  statuses: DeploymentStatus[];
  /** Invalid objects, skipped (the others are still placed). */
  issues: ManifestIssue[];
}

export interface DesiredOptions {
  /** false: retain without placing new replicas. */
  fill?: boolean;
  /** ISO time for condition transitions. */
  now: string;
  /** The deployments' current status conditions (to keep lastTransitionTime when unchanged). */
  previous?: ReadonlyMap<string, readonly FleetCondition[]>;
}

const key = (ns: string | undefined, name: string | undefined) => `${ns ?? ""}/${name ?? ""}`;

/** The replica's serving endpoint, when its status says it is Ready with an address. */
export function servingAddress(o: RawObject): string | undefined {
  const st = (o.status ?? {}) as { address?: unknown; conditions?: unknown };
  const conds = Array.isArray(st.conditions) ? (st.conditions as { type?: unknown; status?: unknown }[]) : [];
  const ready = conds.some((c) => c?.type === "Ready" && c?.status === "True");
  return ready && typeof st.address === "string" && st.address !== "" ? st.address : undefined;
}

function providerType(o: RawObject): string {
  const t = (o.status as { providerType?: unknown } | undefined)?.providerType;
  return typeof t === "string" && t !== "" ? t : DEFAULT_PROVIDER_TYPE;
}

export function desiredFleet(objects: FleetObjects, o: DesiredOptions): DesiredFleet {
  const docs = [
    ...objects.deployments.map((value, i) => ({ file: "ModelDeployment", document: i + 1, value })),
    ...objects.clusters.map((value, i) => ({ file: "InferenceCluster", document: i + 1, value })),
    ...objects.classes.map((value, i) => ({ file: "InferenceClass", document: i + 1, value })),
    ...objects.replicas.map((value, i) => ({ file: "ModelReplica", document: i + 1, value })),
  ];
  const parsed = parseFleetDocuments(docs);
  const result = placeFleet(parsed.input, { fill: o.fill ?? true });

  const uids = new Map<string, { uid: string; generation: number | undefined }>();
  for (const d of objects.deployments) {
    const m = d.metadata;
    if (typeof m?.uid === "string") {
      const gen = typeof m.generation === "number" ? m.generation : undefined;
      uids.set(key(m.namespace ?? "default", m.name), { uid: m.uid, generation: gen });
    }
  }
  const observed = new Map<string, RawObject>();
  for (const r of objects.replicas)
    observed.set(key(r.metadata?.namespace ?? "default", r.metadata?.name), r);

  const replicas = new Map<string, RawObject>();
  const providers = new Map<string, RawObject>();
  const statuses: DeploymentStatus[] = [];
  for (const d of result.deployments) {
    const owner = uids.get(key(d.namespace, d.name));
    for (const r of d.replicas) {
      const obj = replicaObject(r) as RawObject;
      if (owner && obj.metadata) {
        // Deleting the deployment deletes its replicas (Kubernetes' garbage collector).
        obj.metadata.ownerReferences = [
          {
            apiVersion: API_VERSION,
            kind: "ModelDeployment",
            name: d.name,
            uid: owner.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ];
      }
      replicas.set(key(r.namespace, r.name), obj);
      const seen = r.retained ? observed.get(key(r.namespace, r.name)) : undefined;
      const address = seen ? servingAddress(seen) : undefined;
      if (seen && address !== undefined) {
        providers.set(key(r.namespace, r.name), {
          apiVersion: API_VERSION,
          kind: "ModelProvider",
          metadata: {
            namespace: r.namespace,
            name: r.name,
            labels: {
              [MANAGED_BY_LABEL]: MANAGED_BY_FLEET,
              [DEPLOYMENT_LABEL]: d.name,
              [CLUSTER_LABEL]: r.clusterName,
              [REPLICA_INDEX_LABEL]: String(r.index),
            },
          },
          spec: { type: providerType(seen), endpoint: address },
        });
      }
    }
    const before = new Map((o.previous?.get(key(d.namespace, d.name)) ?? []).map((c) => [c.type, c]));
    const conditions: FleetCondition[] = d.conditions.map((c) => {
      const prev = before.get(c.type);
      const since =
        prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : o.now;
      return {
        ...c,
        lastTransitionTime: since,
        ...(owner?.generation !== undefined ? { observedGeneration: owner.generation } : {}),
      };
    });
    statuses.push({
      namespace: d.namespace,
      name: d.name,
      status: { replicas: d.replicas.length, conditions },
      errors: [...d.errors],
    });
  }
  return { result, replicas, providers, statuses, issues: parsed.issues };
}
