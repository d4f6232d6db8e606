// The TopologySource controller (operator --topology, Kubernetes mode): one tracker per
// TopologySource, fed by the operator's caches (Nodes, ConfigMaps; Secrets read on demand for
// a webhook's credential), validated by the pure topology model, with its status written back
// to the source (merge patch on /status) only when it changes.
//
//   nodeLabels  re-checked on every Node or source change (the labels must form a tree)
//   configMap   read on its poll interval and at once when the referenced ConfigMap changes
//   webhook     fetched on its pollInterval (https only, no redirects, 1 MiB, one credential)
//
// A spec change replaces the source's tracker (and its poller); a deleted source stops its
// poller. snapshots() gives the accepted level values in force, for profiles and admission.
import type { KubeConfig } from "@kubernetes/client-node";
import { ErrorCode, invalidArgument, KubemootError } from "../../errors/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import {
  evaluateSource,
  parseTopologyManifests,
  type TopologySource,
  validateSnapshot,
} from "../../topology/index.js";
import {
  errorMessage,
  httpStatus,
  jsonEqual,
  type KubeApi,
  type KubeObject,
  KubeStore,
  RESOURCES,
  type ResourceKind,
  TOPOLOGY_WATCH_KINDS,
} from "../kube/index.js";
import { hostAllowed } from "./allowed-hosts.js";
import { parseTopologySourceArm } from "./arm.js";
import { assertSecretNamespace } from "./credential.js";
import { startTopologySourcePoller, type TopologySourcePoller } from "./poller.js";
import { type TopologySourceStatus, TopologySourceTracker } from "./tracker.js";

type Levels = Map<string, Record<string, string>>;

interface Entry {
  print: string;
  source: TopologySource | undefined;
  tracker: TopologySourceTracker<Levels> | undefined;
  poller: TopologySourcePoller | undefined;
  /** The ConfigMap this source reads, `<ns>/<name>`. */
  configMap: string | undefined;
}

export interface TopologySourceControllerOptions {
  kubeConfig: KubeConfig;
  api?: KubeApi;
  logger?: Logger;
  /**
   * The operator's own namespace (POD_NAMESPACE): the only one whose Secrets a webhook
   * credential may name (docs/deploy.md "RBAC and network policies"). Default: the kubeconfig
   * context's namespace, else "default".
   */
  secretNamespace?: string;
  /**
   * Hosts a webhook source may name (allowed-hosts.ts patterns); empty or absent: any host.
   * A source naming another is refused before its credential is read.
   */
  allowedHosts?: readonly string[];
  /** Debounce of Node/source events (ms); default 200. */
  debounceMs?: number;
  clock?: () => Date;
}

export class TopologySourceController {
  readonly store: KubeStore;
  private readonly log: Logger;
  private readonly debounceMs: number;
  private readonly clock: () => Date;
  private readonly secretNamespace: string;
  private readonly allowedHosts: readonly string[];
  private readonly entries = new Map<string, Entry>();
  private readonly written = new Map<string, unknown>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Status writes done (tests wait on it). */
  writes = 0;

  constructor(o: TopologySourceControllerOptions) {
    this.log = o.logger ?? silentLogger;
    this.store = new KubeStore({
      kubeConfig: o.kubeConfig,
      kinds: TOPOLOGY_WATCH_KINDS,
      ...(o.api ? { api: o.api } : {}),
      logger: this.log,
    });
    this.debounceMs = o.debounceMs ?? 200;
    this.clock = o.clock ?? (() => new Date());
    this.secretNamespace =
      o.secretNamespace ||
      o.kubeConfig.getContextObject(o.kubeConfig.getCurrentContext())?.namespace ||
      "default";
    this.allowedHosts = o.allowedHosts ?? [];
  }

  async start(): Promise<void> {
    await this.store.start((kind, _event, obj) => this.onEvent(kind, obj));
    await this.sync();
    this.log.info({ sources: this.entries.size }, "topology: sources tracked");
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([...this.entries.values()].map((e) => e.poller?.stop()));
    this.entries.clear();
    await this.store.stop();
  }

  /** Accepted level values in force, per Ready configMap/webhook source (nodeLabels: the Nodes'). */
  snapshots(): Map<string, Levels> {
    const now = this.clock();
    const out = new Map<string, Levels>();
    for (const [name, e] of this.entries) {
      const s = e.tracker?.snapshot(now);
      if (s) out.set(name, s.nodes);
    }
    return out;
  }

  /** The current status of a source (undefined when unknown). */
  status(name: string): TopologySourceStatus | undefined {
    return this.entries.get(name)?.tracker?.status(this.clock());
  }

  private onEvent(kind: ResourceKind, obj: KubeObject): void {
    if (this.stopped) return;
    if (kind === "ConfigMap") {
      const key = `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
      for (const e of this.entries.values()) if (e.configMap === key) void e.poller?.pollNow();
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sync().catch((err: unknown) =>
        this.log.error({ err: errorMessage(err) }, "topology: sync failed"),
      );
    }, this.debounceMs);
    this.timer.unref();
  }

  private nodeLabels(): Map<string, Record<string, string>> {
    const out = new Map<string, Record<string, string>>();
    for (const n of this.store.list("Node")) {
      if (n.metadata?.name) out.set(n.metadata.name, { ...(n.metadata.labels ?? {}) });
    }
    return out;
  }

  /** Brings the trackers in line with the TopologySources; re-checks nodeLabels sources. */
  async sync(): Promise<void> {
    const objects = this.store.list("TopologySource");
    const seen = new Set<string>();
    for (const obj of objects) {
      const name = obj.metadata?.name;
      if (!name) continue;
      seen.add(name);
      const print = JSON.stringify(obj.spec ?? null);
      let entry = this.entries.get(name);
      if (!entry || entry.print !== print) {
        await entry?.poller?.stop();
        entry = this.build(name, obj, print);
        this.entries.set(name, entry);
      }
      if (entry.tracker && !entry.poller) await this.writeStatus(name, entry.tracker.status(this.clock()));
    }
    for (const [name, e] of this.entries) {
      if (seen.has(name)) continue;
      await e.poller?.stop();
      this.entries.delete(name);
      this.written.delete(name);
    }
  }

  private build(name: string, obj: KubeObject, print: string): Entry {
    const { manifests, issues } = parseTopologyManifests([{ file: "kubernetes", document: 1, value: obj }]);
    const source = manifests.sources[0];
    let arm: ReturnType<typeof parseTopologySourceArm>;
    try {
      if (!source)
        throw new KubemootError(
          ErrorCode.InvalidManifest,
          issues.map((i) => `${i.field}: ${i.message}`).join("; ") || "invalid spec",
        );
      arm = parseTopologySourceArm(obj.spec, `TopologySource ${name}: spec`);
    } catch (err) {
      return this.refuse(name, print, "InvalidSpec", err);
    }
    if (arm.kind === "webhook") {
      try {
        assertSecretNamespace(
          arm.credential,
          this.secretNamespace,
          `TopologySource ${name}: spec.webhook.credential`,
        );
      } catch (err) {
        return this.refuse(name, print, "SecretNamespaceNotAllowed", err);
      }
      if (this.allowedHosts.length > 0 && !hostAllowed(arm.url, this.allowedHosts)) {
        const host = new URL(arm.url).host;
        const message = `TopologySource ${name}: spec.webhook.url: host "${host}" is not in the operator's allowed hosts (${this.allowedHosts.join(", ")})`;
        return this.refuse(
          name,
          print,
          "HostNotAllowed",
          new KubemootError(ErrorCode.PermissionDenied, message, { field: "spec.webhook.url" }),
        );
      }
    }
    const nodes = () => this.nodeLabels();
    const tracker = new TopologySourceTracker<Levels>({
      name,
      arm,
      validate: (doc) => {
        const r = validateSnapshot(source, doc, nodes());
        return r.ok ? { ok: true, revision: r.revision, nodes: r.nodes } : r;
      },
      selectedNodes: () =>
        evaluateSource(source, { nodes: nodes(), configMaps: new Map() }).selectedNodes.length,
      deps: {
        getConfigMap: (ns, n) =>
          this.store.get("ConfigMap", ns, n) as { data?: Record<string, string> } | undefined,
        readSecret: async (ns, n) => {
          // Checked at build already; kept here so no path reads another namespace's Secret.
          if (ns !== this.secretNamespace) {
            throw invalidArgument("credential", `Secret ${ns}/${n} is outside the operator's namespace`);
          }
          return (await this.store.api.readSecret(ns, n)) as { data?: Record<string, string> } | undefined;
        },
      },
      ...(arm.kind === "nodeLabels"
        ? {
            checkNodeLabels: () => {
              const s = evaluateSource(source, { nodes: nodes(), configMaps: new Map() });
              return s.ready
                ? { ok: true as const }
                : { ok: false as const, reason: s.reason, message: s.message };
            },
          }
        : {}),
    });
    const poller =
      arm.kind === "nodeLabels"
        ? undefined
        : startTopologySourcePoller({
            tracker,
            clock: this.clock,
            onStatus: (s) => void this.writeStatus(name, s),
          });
    const configMap =
      arm.kind === "configMap" ? `${arm.configMapRef.namespace}/${arm.configMapRef.name}` : undefined;
    return { print, source, tracker, poller, configMap };
  }

  /** A source refused before anything is read: not Ready, not valid, saying why. */
  private refuse(name: string, print: string, reason: string, err: unknown): Entry {
    const message = err instanceof Error ? err.message : String(err);
    void this.writeStatus(name, { ready: false, valid: false, reason, message, selectedNodes: 0 });
    return { print, source: undefined, tracker: undefined, poller: undefined, configMap: undefined };
  }

  private async writeStatus(name: string, s: TopologySourceStatus): Promise<void> {
    if (this.stopped) return;
    const status = {
      ready: s.ready,
      valid: s.valid,
      reason: s.reason,
      message: s.message,
      selectedNodes: s.selectedNodes,
      ...(s.lastSuccessfulRevision !== undefined ? { lastSuccessfulRevision: s.lastSuccessfulRevision } : {}),
    };
    if (jsonEqual(this.written.get(name) ?? null, status)) return;
    this.written.set(name, status);
    try {
      const out = await this.store.api.mergePatchStatus(RESOURCES.TopologySource, undefined, name, {
        status,
      });
      this.store.recordWrite("TopologySource", this.store.get("TopologySource", undefined, name), out);
      this.writes++;
    } catch (err) {
      this.written.delete(name); // write again next time
      if (httpStatus(err) !== 404) {
        this.log.warn({ source: name, err: errorMessage(err) }, "topology: status write failed");
      }
    }
  }
}
