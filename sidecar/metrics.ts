// Prometheus metrics of the sidecar (prom-client): `kubemoot_` prefix, base units, `_total`
// counters. One registry per sidecar so that tests can run several in one process.
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type OpenMetricsContentType,
  type PrometheusContentType,
  Registry,
} from "prom-client";
import type { FairView, SchedulerHooks } from "../src/scheduler/index.js";
import { SETTINGS } from "../src/settings/index.js";
import type { StateStats } from "../src/state/index.js";

/** The sidecar's registry: Prometheus text, or OpenMetrics with exemplars. */
export type MetricsRegistry = Registry<PrometheusContentType> | Registry<OpenMetricsContentType>;

export interface SidecarMetrics {
  registry: MetricsRegistry;
  hooks: SchedulerHooks;
  /** Sets the function the active-tickets gauge reads at scrape time. */
  trackActiveTickets(fn: () => number): void;
  trackConversations(fn: () => number): void;
  /** Sets what the fair-share gauges read at scrape time (docs/rules/fairness.md). */
  trackFairShare(fn: () => FairView): void;
  /** Exports what following the shared state costs (entries delivered, providers followed). */
  trackState(stats: StateStats): void;
  /** A provider state entry left out of this sidecar's view (one revision of it). */
  providerRejected(reason: "endpoint"): void;
  render(): Promise<{ contentType: string; body: string }>;
}

export interface SidecarMetricsOptions {
  /**
   * Answer in OpenMetrics, whose histograms carry exemplars (the trace of an observation): on
   * when this process exports traces (docs/tracing.md "Metrics"). Default: the Prometheus text.
   */
  openMetrics?: boolean;
}

export function createSidecarMetrics(o: SidecarMetricsOptions = {}): SidecarMetrics {
  const registry: MetricsRegistry = o.openMetrics === true ? openMetricsRegistry() : new Registry();
  // Event-loop lag sampled every 100 ms, not prom-client's 10 ms: the 10 ms timer alone cost an
  // idle sidecar most of its CPU (docs/benchmarks.md "scale").
  collectDefaultMetrics({ register: registry, prefix: "kubemoot_", eventLoopMonitoringPrecision: 100 });
  const place = new Counter({
    name: "kubemoot_place_total",
    help: "Placement attempts by result (placed, gpu-busy, model-too-large, prompt-too-large) and load kind",
    labelNames: ["result", "load"] as const,
    registers: [registry],
  });
  const placeSeconds = new Histogram({
    name: "kubemoot_place_duration_seconds",
    help: "Time to decide and claim one placement",
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const release = new Counter({
    name: "kubemoot_release_total",
    help: "Released tickets by call outcome",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const truncated = new Counter({
    name: "kubemoot_truncated_prompts_total",
    help: "Calls whose engine evaluated far fewer prompt tokens than were sent",
    registers: [registry],
  });
  const cachePrompt = new Counter({
    name: "kubemoot_prompt_cache_tokens_total",
    help: 'Prompt tokens of released calls whose engine reported them, by provider and model (docs/rules/engines.md "Prompt caches")',
    labelNames: ["provider", "model"] as const,
    registers: [registry],
  });
  const cacheHit = new Counter({
    name: "kubemoot_prompt_cache_hit_tokens_total",
    help: "Of those, the prompt tokens the engine reused from its prompt cache, by provider and model",
    labelNames: ["provider", "model"] as const,
    registers: [registry],
  });
  const prefillSaved = new Counter({
    name: "kubemoot_prompt_cache_prefill_saved_seconds_total",
    help: "Prefill those reused tokens saved, at the prefill rate measured per provider and model, by provider and model",
    labelNames: ["provider", "model"] as const,
    registers: [registry],
  });
  const claimsLost = new Counter({
    name: "kubemoot_claims_lost_total",
    help: "Claims that lost to another sidecar or found no room at claim time, by reason",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const evictions = new Counter({
    name: "kubemoot_evictions_total",
    help: "Models unloaded to make room, by result",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const deleteFailures = new Counter({
    name: "kubemoot_ticket_delete_failures_total",
    help: "Deletes of released tickets that failed, by what followed (retried, or abandoned to the lease)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const rejected = new Counter({
    name: "kubemoot_provider_rejected_total",
    help: `Provider state entries left out of this sidecar's view, once per entry revision, by reason (endpoint: not in ${SETTINGS.providerEndpoints.name})`,
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  let active: () => number = () => 0;
  let fair: (() => FairView) | undefined;
  const fairDeferred = new Counter({
    name: "kubemoot_fair_share_deferrals_total",
    help: "Placement attempts held back for better-ranked waiting calls of other sidecars (docs/rules/fairness.md §3)",
    registers: [registry],
  });
  new Gauge({
    name: "kubemoot_crew_attained_service",
    help: "A crew's attained service fleet-wide, in tokens decayed by the half-life, as this sidecar last read it for a contended model (docs/rules/fairness.md §4)",
    labelNames: ["crew"] as const,
    registers: [registry],
    collect() {
      if (fair === undefined) return;
      this.reset();
      for (const [crew, s] of fair().services) this.set({ crew }, s.service);
    },
  });
  new Gauge({
    name: "kubemoot_fair_share_waiting_calls",
    help: "Calls waiting fleet-wide for the model of this sidecar's last contended decision, by crew and band",
    labelNames: ["crew", "band"] as const,
    registers: [registry],
    collect() {
      if (fair === undefined) return;
      this.reset();
      for (const [crew, byBand] of fair().waiting)
        for (const [band, n] of byBand) this.set({ crew, band }, n);
    },
  });
  new Gauge({
    name: "kubemoot_fair_share_jain_index",
    help: "Jain's index of the backlogged crews' attained service over their weights (1 = fair, 1/n = one crew takes all)",
    registers: [registry],
    collect() {
      if (fair !== undefined) this.set(fair().jain);
    },
  });
  let conversations: () => number = () => 0;
  let state: StateStats | undefined;
  new Counter({
    name: "kubemoot_state_watch_entries_total",
    help: "Entries this sidecar's watches of the shared state delivered, by bucket (docs/rules/state.md §10.1)",
    labelNames: ["bucket"] as const,
    registers: [registry],
    collect() {
      if (state === undefined) return;
      // Mirrors the store's own totals at each scrape.
      this.reset();
      for (const [bucket, n] of Object.entries(state.watchEntries)) this.inc({ bucket }, n);
    },
  });
  new Gauge({
    name: "kubemoot_state_followed_providers",
    help: "Providers whose tickets this sidecar follows one by one (0: it follows the whole bucket)",
    registers: [registry],
    collect() {
      this.set(state?.followedProviders() ?? 0);
    },
  });
  new Gauge({
    name: "kubemoot_state_followed_models",
    help: "Models whose demand this sidecar follows one by one (0: it follows the whole bucket; docs/rules/state.md §10.2)",
    registers: [registry],
    collect() {
      this.set(state?.followedModels() ?? 0);
    },
  });
  new Gauge({
    name: "kubemoot_conversations",
    help: "Conversations this sidecar remembers for prompt-cache placement (bounded; docs/rules/placement.md §5.5)",
    registers: [registry],
    collect() {
      this.set(conversations());
    },
  });
  new Gauge({
    name: "kubemoot_tickets_active",
    help: "Tickets this sidecar holds now (held plans included)",
    registers: [registry],
    collect() {
      this.set(active());
    },
  });
  return {
    registry,
    trackActiveTickets(fn) {
      active = fn;
    },
    trackConversations(fn) {
      conversations = fn;
    },
    trackFairShare(fn) {
      fair = fn;
    },
    trackState(stats) {
      state = stats;
    },
    providerRejected(reason) {
      rejected.inc({ reason });
    },
    hooks: {
      onPlace(outcome, _decision, elapsedMs) {
        placeSeconds.observe(elapsedMs / 1000);
        if (outcome.kind === "placed") {
          place.inc({ result: "placed", load: outcome.placement.coldLoad ? "cold" : "warm" });
        } else {
          place.inc({ result: outcome.refusal.reason, load: "none" });
          if (outcome.refusal.fairDeferral !== undefined) fairDeferred.inc();
        }
      },
      onRelease(a) {
        release.inc({ outcome: a.outcome });
        if (a.truncated) truncated.inc();
        if (a.promptTokens > 0 && a.provider) {
          const labels = { provider: a.provider, model: a.model };
          cachePrompt.inc(labels, a.promptTokens);
          cacheHit.inc(labels, a.cachedPromptTokens);
          prefillSaved.inc(labels, a.prefillSavedMs / 1000);
        }
      },
      onClaimLost(_provider, reason) {
        claimsLost.inc({ reason });
      },
      onEvict(_provider, _model, ok) {
        evictions.inc({ result: ok ? "unloaded" : "failed" });
      },
      onReleaseDeleteFailed(_provider, willRetry) {
        deleteFailures.inc({ outcome: willRetry ? "retried" : "abandoned" });
      },
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

function openMetricsRegistry(): Registry<OpenMetricsContentType> {
  // The typings declare no constructor argument; setting the type before any metric is the same.
  const r = new Registry<OpenMetricsContentType>();
  r.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  return r;
}
