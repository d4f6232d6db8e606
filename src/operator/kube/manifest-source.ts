// The Kubernetes source: informers (list + watch) on the five kubemoot.ai CRDs and on
// Deployments, through the KubeStore. start() resolves once every informer has listed, so the
// first bind never runs on half a cluster.
//
// What triggers a reconcile: any add, update or delete of a Model, ModelProvider, Agent,
// CrewSchedulingPolicy or MootArchetype (status updates included: they are cheap no-op binds),
// and of a Deployment that belongs to an agent (labelled kubemoot.ai/agent, or named like an
// Agent) when its labels, annotations or containers' env change — not its replica status.
import type { ClusterSnapshot } from "../../binding/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import {
  type ChangeListener,
  type ManifestSource,
  type ProviderInfo,
  providerInfos,
} from "../sources/index.js";
import type { KubeObject } from "./client.js";
import { AGENT_LABEL, ENV_CONTAINERS_ANNOTATION } from "./env.js";
import type { InformerEvent } from "./informer.js";
import { convertObjects, formatObjectIssue, type ObjectIssue } from "./objects.js";
import type { ResourceKind } from "./resources.js";
import type { KubeStore } from "./store.js";

export interface KubernetesSourceOptions {
  store: KubeStore;
  logger?: Logger;
}

export class KubernetesManifestSource implements ManifestSource {
  readonly kind = "kubernetes";
  readonly statusAuthority = "source" as const;
  private readonly store: KubeStore;
  private readonly log: Logger;
  private listener: ChangeListener | undefined;
  private readonly deploymentPrints = new Map<string, string>();
  private loggedIssues = new Set<string>();
  private currentIssues: ObjectIssue[] = [];

  constructor(o: KubernetesSourceOptions) {
    this.store = o.store;
    this.log = o.logger ?? silentLogger;
  }

  async start(onChange: ChangeListener): Promise<void> {
    await this.store.start((kind, event, obj) => this.onEvent(kind, event, obj));
    this.listener = onChange;
    this.log.info({}, "kubernetes: informers synced");
  }

  snapshot(): ClusterSnapshot {
    const { snapshot, issues } = convertObjects({
      models: this.store.list("Model"),
      providers: this.store.list("ModelProvider"),
      agents: this.store.list("Agent"),
      policies: this.store.list("CrewSchedulingPolicy"),
      archetypes: this.store.list("MootArchetype"),
    });
    const now = new Set<string>();
    for (const i of issues) {
      const key = `${i.kind}/${i.object}@${i.resourceVersion ?? ""}: ${i.field}`;
      now.add(key);
      if (this.loggedIssues.has(key)) continue;
      this.log.warn(
        { kind: i.kind, object: i.object, field: i.field, resourceVersion: i.resourceVersion },
        `invalid object skipped: ${formatObjectIssue(i)}`,
      );
    }
    this.loggedIssues = now;
    this.currentIssues = issues;
    return snapshot;
  }

  /** The invalid objects of the last snapshot. */
  issues(): readonly ObjectIssue[] {
    return this.currentIssues;
  }

  providers(): ProviderInfo[] {
    const { snapshot } = convertObjects({
      models: [],
      providers: this.store.list("ModelProvider"),
      agents: [],
      policies: [],
      archetypes: [],
    });
    return providerInfos(snapshot.providers);
  }

  async stop(): Promise<void> {
    this.listener = undefined;
    await this.store.stop();
  }

  private onEvent(kind: ResourceKind, event: InformerEvent, obj: KubeObject): void {
    const ns = obj.metadata?.namespace;
    const name = obj.metadata?.name ?? "?";
    const ref = `${kind} ${ns ? `${ns}/` : ""}${name}`;
    if (kind === "Deployment" && !this.deploymentMatters(event, obj)) return;
    this.listener?.(`${ref} ${event}`);
  }

  /** Whether a Deployment event can change what the sink would write. */
  private deploymentMatters(event: InformerEvent, d: KubeObject): boolean {
    const ns = d.metadata?.namespace ?? "";
    const name = d.metadata?.name ?? "";
    const key = `${ns}/${name}`;
    if (event === "delete") {
      const had = this.deploymentPrints.delete(key);
      return had && this.belongsToAgent(d);
    }
    const print = JSON.stringify([
      d.metadata?.labels?.[AGENT_LABEL],
      d.metadata?.annotations?.[ENV_CONTAINERS_ANNOTATION],
      containersEnv(d),
    ]);
    const before = this.deploymentPrints.get(key);
    this.deploymentPrints.set(key, print);
    return before !== print && this.belongsToAgent(d);
  }

  private belongsToAgent(d: KubeObject): boolean {
    if (d.metadata?.labels?.[AGENT_LABEL] !== undefined) return true;
    const ns = d.metadata?.namespace;
    const name = d.metadata?.name;
    return name !== undefined && this.store.get("Agent", ns, name) !== undefined;
  }
}

function containersEnv(d: KubeObject): unknown {
  const spec = JSON.parse(JSON.stringify(d.spec ?? {})) as {
    template?: { spec?: { containers?: { name?: string; env?: unknown }[] } };
  };
  return (spec.template?.spec?.containers ?? []).map((c) => [c.name, c.env ?? []]);
}
