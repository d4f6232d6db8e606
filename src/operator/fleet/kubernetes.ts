// Fleet placement against a cluster: informers on ModelDeployments, InferenceClusters,
// InferenceClasses, ModelReplicas and ModelProviders (a KubeStore of its own, so a cluster
// without the fleet CRDs never holds up the binder); on every change (debounced) and every
// resync, the pure placement runs and only the differences are written:
//
//   ModelReplica     created / merge-patched (labels, spec) / deleted (scaled down, dropped)
//   ModelDeployment  status (merge patch on /status): replicas, ReplicasScheduled condition
//   ModelProvider    one per Ready replica with an address, labelled managed-by kubemoot-fleet;
//                    deleted when the replica stops serving. The binder's own informers see
//                    them, so fleet placement feeds call-time scheduling.
//
// A failed write is logged and retried at the next change or resync; one failure never stops
// the other writes. Only replicas of existing deployments (by the kubemoot.ai/deployment
// label) are ever deleted here; replicas of a deleted deployment go with it (ownerReferences).
import type { KubeConfig } from "@kubernetes/client-node";
import { DEPLOYMENT_LABEL } from "../../fleet/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import {
  type BackoffOptions,
  errorMessage,
  FLEET_WATCH_KINDS,
  httpStatus,
  jsonEqual,
  type KubeApi,
  type KubeObject,
  KubeStore,
  RESOURCES,
  type ResourceKind,
} from "../kube/index.js";
import {
  type DesiredFleet,
  desiredFleet,
  type FleetCondition,
  MANAGED_BY_FLEET,
  MANAGED_BY_LABEL,
  type RawObject,
} from "./desired.js";

export interface KubernetesFleetOptions {
  kubeConfig: KubeConfig;
  /** Replaces the client-node calls (tests). */
  api?: KubeApi;
  namespaces?: readonly string[];
  logger?: Logger;
  /** Debounce of change events (ms); default 200. */
  debounceMs?: number;
  /** Periodic re-placement even without events (ms); default 30 000; 0 turns it off. */
  resyncMs?: number;
  /** false: retain existing replicas without placing new ones. Default true. */
  fill?: boolean;
  backoff?: BackoffOptions;
  /** Clock for condition transition times (tests); default Date.now. */
  now?: () => number;
}

export interface FleetReconcileReport {
  created: number;
  updated: number;
  deleted: number;
  statusWrites: number;
  failures: string[];
}

export class KubernetesFleet {
  readonly store: KubeStore;
  private readonly log: Logger;
  private readonly debounceMs: number;
  private readonly resyncMs: number;
  private readonly fill: boolean;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Reconciles done (tests wait on it). */
  reconciles = 0;
  last: FleetReconcileReport | undefined;

  constructor(o: KubernetesFleetOptions) {
    this.log = o.logger ?? silentLogger;
    this.store = new KubeStore({
      kubeConfig: o.kubeConfig,
      kinds: FLEET_WATCH_KINDS,
      ...(o.api ? { api: o.api } : {}),
      ...(o.namespaces ? { namespaces: o.namespaces } : {}),
      ...(o.backoff ? { backoff: o.backoff } : {}),
      logger: this.log,
    });
    this.debounceMs = o.debounceMs ?? 200;
    this.resyncMs = o.resyncMs ?? 30_000;
    this.fill = o.fill ?? true;
    this.now = o.now ?? Date.now;
  }

  /** Lists everything, places once, then follows changes. */
  async start(): Promise<void> {
    await this.store.start((kind) => this.onEvent(kind));
    await this.reconcileNow();
    if (this.resyncMs > 0) {
      this.resync = setInterval(() => this.schedule(0), this.resyncMs);
      this.resync.unref();
    }
    this.log.info({ fill: this.fill }, "fleet: informers synced, placement running");
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.resync) clearInterval(this.resync);
    await this.running;
    await this.store.stop();
  }

  private onEvent(_kind: ResourceKind): void {
    this.schedule(this.debounceMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.reconcileNow();
    }, ms);
    this.timer.unref();
  }

  /** One placement and its writes; a call while one runs makes it run once more after. */
  async reconcileNow(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          this.last = await this.reconcile();
        } catch (err) {
          this.log.error({ err: errorMessage(err) }, "fleet: reconcile failed");
        }
        this.reconciles++;
      } while (this.again && !this.stopped);
    })();
    try {
      await this.running;
    } finally {
      this.running = undefined;
    }
  }

  private async reconcile(): Promise<FleetReconcileReport> {
    const deployments = this.store.list("ModelDeployment") as RawObject[];
    const previous = new Map<string, FleetCondition[]>();
    for (const d of deployments) {
      const conds = (d.status as { conditions?: FleetCondition[] } | undefined)?.conditions;
      if (Array.isArray(conds))
        previous.set(`${d.metadata?.namespace ?? ""}/${d.metadata?.name ?? ""}`, conds);
    }
    const desired = desiredFleet(
      {
        deployments,
        clusters: this.store.list("InferenceCluster") as RawObject[],
        classes: this.store.list("InferenceClass") as RawObject[],
        replicas: this.store.list("ModelReplica") as RawObject[],
      },
      { fill: this.fill, now: new Date(this.now()).toISOString(), previous },
    );
    for (const i of desired.issues) {
      this.log.warn(
        { kind: i.kind, object: i.object, field: i.field },
        `fleet: invalid object skipped: ${i.message}`,
      );
    }
    const report: FleetReconcileReport = {
      created: 0,
      updated: 0,
      deleted: 0,
      statusWrites: 0,
      failures: [],
    };
    const names = new Set(deployments.map((d) => `${d.metadata?.namespace ?? ""}/${d.metadata?.name ?? ""}`));
    await this.syncObjects(
      "ModelReplica",
      desired.replicas,
      (o) => {
        const dep = o.metadata?.labels?.[DEPLOYMENT_LABEL];
        return dep !== undefined && names.has(`${o.metadata?.namespace ?? ""}/${dep}`);
      },
      report,
    );
    await this.syncObjects(
      "ModelProvider",
      desired.providers,
      (o) => o.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_FLEET,
      report,
    );
    await this.writeStatuses(desired, report);
    if (
      report.created + report.updated + report.deleted + report.statusWrites > 0 ||
      report.failures.length
    ) {
      this.log.info(
        {
          created: report.created,
          updated: report.updated,
          deleted: report.deleted,
          statusWrites: report.statusWrites,
          failures: report.failures.length,
        },
        "fleet: placement applied",
      );
    }
    return report;
  }

  /** Creates or patches every desired object; deletes the owned ones (`owned`) not desired. */
  private async syncObjects(
    kind: "ModelReplica" | "ModelProvider",
    desired: ReadonlyMap<string, RawObject>,
    owned: (o: RawObject) => boolean,
    report: FleetReconcileReport,
  ): Promise<void> {
    const r = RESOURCES[kind];
    const api = this.store.api;
    for (const [k, want] of desired) {
      const ns = want.metadata?.namespace;
      const name = want.metadata?.name ?? "";
      const have = this.store.get(kind, ns, name);
      try {
        if (!have) {
          const out = await api.createObject(r, ns, want as KubeObject);
          this.store.recordWrite(kind, undefined, out);
          report.created++;
        } else {
          const patch = diffPatch(have as RawObject, want);
          if (patch) {
            const out = await api.mergePatchObject(r, ns, name, patch);
            this.store.recordWrite(kind, have, out);
            report.updated++;
          }
        }
      } catch (err) {
        if (httpStatus(err) === 409) continue; // created meanwhile: the next event reconciles it
        report.failures.push(`${kind} ${k}: ${errorMessage(err)}`);
        this.log.warn({ kind, object: k, err: errorMessage(err) }, "fleet: write failed");
      }
    }
    for (const have of this.store.list(kind) as RawObject[]) {
      const k = `${have.metadata?.namespace ?? ""}/${have.metadata?.name ?? ""}`;
      if (desired.has(k) || !owned(have)) continue;
      try {
        await api.deleteObject(r, have.metadata?.namespace, have.metadata?.name ?? "");
        report.deleted++;
      } catch (err) {
        if (httpStatus(err) === 404) continue;
        report.failures.push(`${kind} ${k}: ${errorMessage(err)}`);
        this.log.warn({ kind, object: k, err: errorMessage(err) }, "fleet: delete failed");
      }
    }
  }

  private async writeStatuses(desired: DesiredFleet, report: FleetReconcileReport): Promise<void> {
    const r = RESOURCES.ModelDeployment;
    for (const s of desired.statuses) {
      const have = this.store.get("ModelDeployment", s.namespace, s.name);
      if (!have) continue;
      const current = (have.status ?? {}) as { replicas?: unknown; conditions?: unknown };
      if (
        current.replicas === s.status.replicas &&
        jsonEqual(current.conditions ?? null, s.status.conditions)
      )
        continue;
      try {
        const out = await this.store.api.mergePatchStatus(r, s.namespace, s.name, { status: s.status });
        this.store.recordWrite("ModelDeployment", have, out);
        report.statusWrites++;
      } catch (err) {
        if (httpStatus(err) === 404) continue;
        report.failures.push(`ModelDeployment ${s.namespace}/${s.name} status: ${errorMessage(err)}`);
      }
    }
  }
}

/** A merge patch bringing `have`'s labels and spec to `want`'s; undefined when equal. */
function diffPatch(have: RawObject, want: RawObject): object | undefined {
  const patch: { metadata?: object; spec?: unknown } = {};
  const hl = have.metadata?.labels ?? {};
  const wl = want.metadata?.labels ?? {};
  if (Object.entries(wl).some(([k, v]) => hl[k] !== v)) patch.metadata = { labels: wl };
  // spec is replaced whole: arrays (engines, members) cannot be merged field by field anyway.
  if (!jsonEqual(have.spec ?? null, want.spec ?? null)) patch.spec = want.spec;
  return patch.metadata || patch.spec !== undefined ? patch : undefined;
}
