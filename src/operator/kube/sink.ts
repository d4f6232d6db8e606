// The Kubernetes sink: writes a bind result to the API server, only what changed.
//
//   Agent                 status (merge patch on /status): scheduling + Scheduled condition
//   CrewSchedulingPolicy  status (merge patch on /status): conditions, unknownPhases, counts
//   ModelProvider         status (merge patch on /status): capacity from the provider states
//                         handed to the reconciler, agentCount, ready, lastProbedAt
//   Deployment            env of the agent's containers (JSON patch; see env.ts)
//   Event                 FailedScheduling and policy warnings (see events.ts)
//
// Current state is read through the KubeStore (informer caches plus the operator's own recent
// writes). One failed write does not stop the others: it is reported, and the reconciler
// retries with backoff. An object deleted in the meantime (404) is skipped silently.
import type { BindResult } from "../../binding/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import { type BindingSink, count, emptyReport, type SinkContext, type SinkReport } from "../sources/index.js";
import { errorMessage, httpStatus, type KubeObject } from "./client.js";
import { deploymentsByAgent, planEnvPatch } from "./env.js";
import { coreEvent, DEFAULT_EVENT_REPEAT_MS, EventMemory, plannedEvents } from "./events.js";
import { RESOURCES, type ResourceKind } from "./resources.js";
import {
  agentCounts,
  agentStatusPatch,
  DEFAULT_PROBED_AT_REFRESH_MS,
  policyStatusPatch,
  providerStatusPatch,
} from "./status.js";
import type { KubeStore } from "./store.js";

export interface KubernetesSinkOptions {
  store: KubeStore;
  logger?: Logger;
  /** Mirror FailedScheduling onto the Agent too (besides the policy); default true. */
  agentEvents?: boolean;
  /** Post an ongoing event again after this long; default 10 min. */
  eventRepeatMs?: number;
  /** Write a ModelProvider status whose only change is lastProbedAt at most this often; default 60 s. */
  probedAtRefreshMs?: number;
  /** Patch the agents' Deployments; default true. */
  deployments?: boolean;
}

export class KubernetesBindingSink implements BindingSink {
  readonly kind = "kubernetes";
  private readonly store: KubeStore;
  private readonly log: Logger;
  private readonly agentEvents: boolean;
  private readonly probedAtRefreshMs: number;
  private readonly patchDeployments: boolean;
  private readonly events: EventMemory;
  private eventSeq = 0;

  constructor(o: KubernetesSinkOptions) {
    this.store = o.store;
    this.log = o.logger ?? silentLogger;
    this.agentEvents = o.agentEvents ?? true;
    this.probedAtRefreshMs = o.probedAtRefreshMs ?? DEFAULT_PROBED_AT_REFRESH_MS;
    this.patchDeployments = o.deployments ?? true;
    this.events = new EventMemory(o.eventRepeatMs ?? DEFAULT_EVENT_REPEAT_MS);
  }

  async write(result: BindResult, ctx: SinkContext): Promise<SinkReport> {
    const report = emptyReport();
    await this.agentStatuses(result, report);
    await this.policyStatuses(result, report);
    await this.providerStatuses(result, ctx, report);
    if (this.patchDeployments) await this.deploymentEnv(result, report);
    await this.postEvents(result, ctx, report);
    return report;
  }

  private async agentStatuses(result: BindResult, report: SinkReport): Promise<void> {
    for (const a of result.agents) {
      const current = this.store.get("Agent", a.namespace, a.name);
      if (!current) continue;
      const patch = agentStatusPatch(current, a);
      await this.patchStatus("Agent", current, patch, report, "agentStatus");
    }
  }

  private async policyStatuses(result: BindResult, report: SinkReport): Promise<void> {
    for (const p of result.policies) {
      const current = this.store.get("CrewSchedulingPolicy", p.namespace, p.name);
      if (!current) continue;
      await this.patchStatus(
        "CrewSchedulingPolicy",
        current,
        policyStatusPatch(current, p),
        report,
        "policyStatus",
      );
    }
  }

  private async providerStatuses(result: BindResult, ctx: SinkContext, report: SinkReport): Promise<void> {
    const counts = agentCounts(result.agents);
    const states = new Map(ctx.providerStates.map((s) => [s.name, s]));
    for (const current of this.store.list("ModelProvider")) {
      const name = current.metadata?.name;
      if (name === undefined) continue;
      const ns = current.metadata?.namespace;
      const overlaid = ctx.snapshot.providers.find((p) => p.name === name && p.namespace === ns);
      const patch = providerStatusPatch(
        current,
        overlaid,
        states.get(name),
        counts.get(`${ns ?? ""}/${name}`) ?? 0,
        this.probedAtRefreshMs,
        ctx.engineMismatches ? { mismatch: ctx.engineMismatches.get(name), now: ctx.now } : undefined,
      );
      await this.patchStatus("ModelProvider", current, patch, report, "providerStatus");
    }
  }

  private async patchStatus(
    kind: ResourceKind,
    current: KubeObject,
    patch: object | undefined,
    report: SinkReport,
    what: string,
  ): Promise<void> {
    if (!patch) {
      report.skipped += 1;
      return;
    }
    const ns = current.metadata?.namespace;
    const name = current.metadata!.name!;
    const target = `status ${kind}/${ns ? `${ns}/` : ""}${name}`;
    try {
      const out = await this.store.api.mergePatchStatus(RESOURCES[kind], ns, name, patch);
      this.store.recordWrite(kind, current, out);
      report.writes += 1;
      count(report, what);
      this.log.debug({ target, patch }, "status patched");
    } catch (err) {
      this.failed(report, target, err);
    }
  }

  private async deploymentEnv(result: BindResult, report: SinkReport): Promise<void> {
    const index = deploymentsByAgent(this.store.list("Deployment"), result.agents);
    for (const a of result.agents) {
      for (const d of index.get(a.key) ?? []) {
        const ops = planEnvPatch(d, a);
        if (!ops) {
          report.skipped += 1;
          continue;
        }
        const ns = d.metadata!.namespace!;
        const name = d.metadata!.name!;
        const target = `env Deployment/${ns}/${name}`;
        try {
          const out = await this.store.api.jsonPatchDeployment(ns, name, ops);
          this.store.recordWrite("Deployment", d, out);
          report.writes += 1;
          count(report, "deploymentEnv");
          this.log.info({ deployment: `${ns}/${name}`, agent: a.key }, "agent Deployment env updated");
        } catch (err) {
          this.failed(report, target, err);
        }
      }
    }
  }

  private async postEvents(result: BindResult, ctx: SinkContext, report: SinkReport): Promise<void> {
    const nowMs = ctx.now.getTime();
    for (const e of this.events.due(plannedEvents(result, this.agentEvents), nowMs)) {
      const involved = this.store.get(e.kind, e.namespace, e.name);
      if (!involved) continue; // the object is gone (or not visible to this operator)
      const target = `event ${e.reason} on ${e.object}`;
      try {
        await this.store.api.createEvent(
          e.namespace ?? "default",
          coreEvent(e, involved, ctx.now, this.eventSeq++),
        );
        this.events.markPosted(e, nowMs);
        report.writes += 1;
        count(report, "events");
      } catch (err) {
        this.failed(report, target, err);
      }
    }
  }

  private failed(report: SinkReport, target: string, err: unknown): void {
    if (httpStatus(err) === 404) {
      report.skipped += 1; // deleted since it was cached; its watch event follows
      return;
    }
    const message = errorMessage(err);
    report.failures.push({ target, message });
    this.log.warn({ target, err: message }, "write failed");
  }
}
