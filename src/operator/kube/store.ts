// The operator's view of the cluster: one resilient informer per resource (per namespace when
// the operator is limited to some namespaces), plus the objects the operator itself just wrote.
//
// A write's response is newer than the informer's cache until the watch delivers it; reading
// through the store makes the next reconcile see what was written, so it neither writes the
// same thing twice nor binds from a stale status. A written object stays in front of the cached
// one while the cache holds the version the write was based on, or (resourceVersions that are
// integers, as etcd's are) an older one.
import type { KubeConfig } from "@kubernetes/client-node";
import { type Logger, silentLogger } from "../../log/index.js";
import type { BackoffOptions } from "./backoff.js";
import { ClientNodeKubeApi, type KubeApi, type KubeObject } from "./client.js";
import { type InformerEvent, ResilientInformer } from "./informer.js";
import { BINDER_KINDS, collectionPath, RESOURCES, type ResourceKind } from "./resources.js";

export interface KubeStoreOptions {
  kubeConfig: KubeConfig;
  /** The API calls; default: client-node over kubeConfig. */
  api?: KubeApi;
  /** The kinds to watch; default the binder's (BINDER_KINDS). */
  kinds?: readonly ResourceKind[];
  /** Watch only these namespaces (cluster-scoped kinds are always watched cluster-wide). */
  namespaces?: readonly string[];
  backoff?: BackoffOptions;
  /** A watch healthy this long resets its backoff; default 30 s. */
  stableMs?: number;
  logger?: Logger;
}

export type StoreListener = (kind: ResourceKind, event: InformerEvent, obj: KubeObject) => void;

interface Written {
  object: KubeObject;
  /** The cached resourceVersion the write was based on. */
  baseRv: string | undefined;
}

export class KubeStore {
  readonly api: KubeApi;
  private readonly informers = new Map<ResourceKind, ResilientInformer[]>();
  private readonly written = new Map<string, Written>();
  private listener: StoreListener | undefined;

  constructor(o: KubeStoreOptions) {
    this.api = o.api ?? new ClientNodeKubeApi(o.kubeConfig);
    const log = o.logger ?? silentLogger;
    for (const kind of o.kinds ?? BINDER_KINDS) {
      const r = RESOURCES[kind];
      const scopes: (string | undefined)[] =
        r.namespaced && o.namespaces?.length ? [...o.namespaces] : [undefined];
      this.informers.set(
        kind,
        scopes.map(
          (ns) =>
            new ResilientInformer({
              kubeConfig: o.kubeConfig,
              name: ns === undefined ? r.plural : `${r.plural} in ${ns}`,
              path: collectionPath(r, ns),
              list: () => this.api.list(r, ns),
              onEvent: (event, obj) => this.onEvent(kind, event, obj),
              ...(o.backoff ? { backoff: o.backoff } : {}),
              ...(o.stableMs !== undefined ? { stableMs: o.stableMs } : {}),
              logger: log,
            }),
        ),
      );
    }
  }

  /** Starts every informer; resolves once all have listed (each keeps retrying until then). */
  async start(listener: StoreListener): Promise<void> {
    this.listener = listener;
    await Promise.all([...this.informers.values()].flat().map((i) => i.start()));
  }

  async stop(): Promise<void> {
    this.listener = undefined;
    await Promise.all([...this.informers.values()].flat().map((i) => i.stop()));
  }

  /** Restarts after watch errors, summed over all informers. */
  get restarts(): number {
    return [...this.informers.values()].flat().reduce((n, i) => n + i.restarts, 0);
  }

  list(kind: ResourceKind): KubeObject[] {
    const out: KubeObject[] = [];
    for (const inf of this.informers.get(kind) ?? []) {
      for (const obj of inf.list()) out.push(this.fresher(kind, obj));
    }
    return out;
  }

  get(kind: ResourceKind, namespace: string | undefined, name: string): KubeObject | undefined {
    for (const inf of this.informers.get(kind) ?? []) {
      const obj = inf.get(name, RESOURCES[kind].namespaced ? namespace : undefined);
      if (obj) return this.fresher(kind, obj);
    }
    return undefined;
  }

  /** Records the API server's answer to a write, based on the cached `base`. */
  recordWrite(kind: ResourceKind, base: KubeObject | undefined, result: KubeObject): void {
    const meta = result.metadata;
    if (!meta?.name) return;
    this.written.set(key(kind, meta.namespace, meta.name), {
      object: result,
      baseRv: base?.metadata?.resourceVersion,
    });
  }

  private fresher(kind: ResourceKind, cached: KubeObject): KubeObject {
    const meta = cached.metadata;
    if (!meta?.name) return cached;
    const k = key(kind, meta.namespace, meta.name);
    const w = this.written.get(k);
    if (!w) return cached;
    const rv = meta.resourceVersion;
    const writtenRv = w.object.metadata?.resourceVersion;
    if (rv === w.baseRv || olderRv(rv, writtenRv)) return w.object;
    this.written.delete(k);
    return cached;
  }

  private onEvent(kind: ResourceKind, event: InformerEvent, obj: KubeObject): void {
    if (event === "delete" && obj.metadata?.name) {
      this.written.delete(key(kind, obj.metadata.namespace, obj.metadata.name));
    }
    this.listener?.(kind, event, obj);
  }
}

function key(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ""}/${name}`;
}

/** Whether resourceVersion a is older than b, when both are integers (etcd's are). */
function olderRv(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}
