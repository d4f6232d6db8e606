// The sidecar process: shared state, the scheduler, the API server (gRPC + Connect +
// gRPC-Web + health on one port) and, optionally, providers it probes itself. Start-up
// (docs/deploy.md "Start-up and readiness"): the API and health ports listen first, NOT_SERVING
// and answering UNAVAILABLE, while the shared state opens with retries (./open-state.ts); the
// scheduler, its providers and the proxy start once it is open, and readiness follows the
// state's connection from then on. Shutdown: readiness NOT_SERVING, in-flight work finishes
// (bounded), every held and active ticket is released, NATS is closed.
import { hostname } from "node:os";
import { create, toJson } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Logger } from "pino";
import { ErrorCode, KubemootError } from "../src/errors/index.js";
import { AttributionSchema, SchedulerService } from "../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { type ListenerLimits, parseHostPort } from "../src/net/index.js";
import { ProviderPublisher, type PublishedProvider, publishNeededFrom } from "../src/publisher/index.js";
import type { SchedulerConfig } from "../src/scheduler/index.js";
import { composeHooks, Scheduler } from "../src/scheduler/index.js";
import { SETTINGS } from "../src/settings/index.js";
import { agentHolderId, type KvStore, type StateStore, type StateStoreOptions } from "../src/state/index.js";
import { tracingActive } from "../src/tracing/index.js";
import { decisionHooks } from "../src/web/index.js";
import {
  type ApiServer,
  identityInterceptor,
  lateService,
  loggingInterceptor,
  metricsInterceptor,
  startApiServer,
  tracingInterceptor,
} from "./api/index.js";
import { openDiscussions } from "./discussions.js";
import { endpointGuard } from "./endpoint-guard.js";
import { createSidecarMetrics, type MetricsRegistry } from "./metrics.js";
import { ollamaOps } from "./ollama-ops.js";
import { type OpenedState, OpeningConnection, openStateWithRetry } from "./open-state.js";
import { attributionMessage, schedulerService } from "./scheduler/service.js";

export interface SidecarOptions {
  /** API address HOST:PORT (port 0 = any free port). */
  listen: string;
  /** Health-only port HOST:PORT (gRPC health, /healthz, /readyz, /metrics); empty or absent = none. */
  healthListen?: string;
  /** Connection limits of the API and health ports (and the proxy's, through `extras`). */
  limits?: Partial<ListenerLimits>;
  /**
   * "memory" (embedded store), a NATS URL (or URLs, comma-separated), or a KvStore shared
   * with other parts of this process (standalone: the operator writes into the same store).
   */
  state: "memory" | string | KvStore;
  config: SchedulerConfig;
  logger: Logger;
  /** Providers this process probes and publishes itself (the direct-probe path). */
  providers?: PublishedProvider[];
  /** Probe interval of those providers (ms); default 10 000. */
  probeIntervalMs?: number;
  /** Longest a shutdown waits for in-flight calls (ms); default 20 000. */
  drainMs?: number;
  /** More shared-state options (NATS credentials/TLS, bucket replicas). */
  stateOptions?: Pick<StateStoreOptions, "nats" | "replicas" | "keyLayout">;
  /** Starts extra servers on the running scheduler (the local proxy). */
  extras?: (ctx: SidecarContext) => Promise<{ close(drainMs: number): Promise<void> }>;
  /**
   * Ends the start (SIGTERM while the shared state is still opening): what was started is
   * closed and startSidecar rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /** Called once the API (and health) port listens, before the shared state is open. */
  onListening?: (api: ApiServer) => void;
}

export interface SidecarContext {
  scheduler: Scheduler;
  state: StateStore;
  logger: Logger;
  /** The sidecar's Prometheus registry (served on the API port's /metrics). */
  registry: MetricsRegistry;
}

export interface RunningSidecar {
  readonly api: ApiServer;
  readonly scheduler: Scheduler;
  readonly state: StateStore;
  close(): Promise<void>;
}

export async function startSidecar(o: SidecarOptions): Promise<RunningSidecar> {
  const { host, port } = parseHostPort("--listen", o.listen);
  const health = o.healthListen ? parseHostPort("--health-listen", o.healthListen) : undefined;
  const log = o.logger;
  const target =
    typeof o.state !== "string"
      ? o.state
      : o.state === "memory"
        ? "memory"
        : o.state.split(",").map((s) => s.trim());
  const metrics = createSidecarMetrics({ openMetrics: tracingActive() });
  const guard = endpointGuard(o.config.providerEndpoints, log, (reason) => metrics.providerRejected(reason));
  for (const b of [o.config.staticMulling, o.config.staticTriage]) {
    if (b && !guard.allowlist.allows(b.endpoint)) {
      log.warn(
        { model: b.model },
        `static binding's endpoint is not in ${SETTINGS.providerEndpoints.name}: never used`,
      );
    }
  }
  const stateConnection = new OpeningConnection();
  let impl: ServiceImpl<typeof SchedulerService> | undefined;
  const api = await startApiServer({
    host,
    port,
    impl: lateService(SchedulerService, () => impl, notOpenYet),
    metrics: () => metrics.render(),
    ...(health ? { health } : {}),
    ...(o.limits ? { limits: o.limits } : {}),
    stateConnection,
    interceptors: [
      // Off, not even the API's no-op spans: an untraced sidecar pays nothing per call for it.
      ...(tracingActive() ? [tracingInterceptor()] : []),
      metricsInterceptor(metrics.registry),
      loggingInterceptor(log),
      identityInterceptor(o.config.agent),
    ],
  });
  log.info(
    { listen: api.address, healthListen: api.healthAddress || undefined, agent: o.config.agent || undefined },
    "sidecar API listening; not ready until the shared state is open",
  );
  o.onListening?.(api);

  let opened: OpenedState;
  try {
    opened = await openStateWithRetry(
      target,
      {
        ...o.stateOptions,
        // Only the tickets of the providers its calls can use (docs/rules/state.md §10.1).
        ticketsScope: "candidates",
        logger: log,
        ...(guard.filter ? { acceptProvider: guard.filter } : {}),
        ticketLeaseMs: o.config.leaseS * 1000,
        ...(o.config.agent ? { holderId: agentHolderId(o.config.agent, process.pid) } : {}),
      },
      { logger: log, ...(o.signal ? { signal: o.signal } : {}) },
    );
  } catch (err) {
    await api.close();
    throw err;
  }
  const state = opened.state;
  const ops = ollamaOps(guard.allowlist);
  const holderId = o.config.agent
    ? agentHolderId(o.config.agent, process.pid)
    : `${hostname()}/${process.pid}`;
  const discussions = await openDiscussions(state.kv, log);
  const scheduler: Scheduler = new Scheduler({
    state,
    config: o.config,
    ops,
    discussions: discussions.link,
    hooks: composeHooks(
      metrics.hooks,
      // The web view's feed (docs/web-view.md "Decision records").
      decisionHooks({
        bus: state.kv.messages,
        instance: holderId,
        policy: o.config.policy,
        ratePerS: o.config.decisionRecordsPerS ?? SETTINGS.decisionRecordsPerS.default,
        crewOf: (agent) => scheduler.fair.crewOf({ agent }),
        defaultAgent: o.config.agent,
        attributionJson: (a) => {
          // The endpoint stays out: the view shows providers by name (docs/web-view.md "Security").
          const { endpoint: _e, ...json } = toJson(
            AttributionSchema,
            create(AttributionSchema, attributionMessage(a)),
          ) as Record<string, unknown>;
          return json;
        },
      }),
      { log: (level, msg, fields) => log[level](fields ?? {}, msg) },
    ),
  });
  metrics.trackActiveTickets(() => scheduler.activeTickets);
  metrics.trackConversations(() => scheduler.conversationCount);
  metrics.trackFairShare(() => scheduler.fair.view());
  metrics.trackState(state.stats);

  let publisher: ProviderPublisher | undefined;
  let extra: { close(drainMs: number): Promise<void> } | undefined;
  try {
    if (o.providers && o.providers.length > 0) {
      publisher = new ProviderPublisher({
        sink: state.providerWriter,
        publishNeeded: publishNeededFrom(() => state.tickets.everything()),
        intervalMs: o.probeIntervalMs ?? 10_000,
        logger: log,
      });
      await publisher.setProviders(o.providers);
      publisher.start();
      await publisher.probeNow();
    }
    extra = o.extras
      ? await o.extras({ scheduler, state, logger: log, registry: metrics.registry })
      : undefined;
  } catch (err) {
    await scheduler.close();
    await api.close();
    await publisher?.stop();
    await ops.close();
    await discussions.close();
    await opened.close();
    throw err;
  }
  // Ready: the RPCs reach the scheduler, and readiness follows the state's connection.
  impl = schedulerService(scheduler);
  stateConnection.attach(state.kv.connection);
  log.info({ state: state.kind }, "sidecar ready: shared state open");

  let closing: Promise<void> | undefined;
  return {
    api,
    scheduler,
    state,
    close() {
      closing ??= (async () => {
        api.setServing(false);
        const drainMs = o.drainMs ?? 20_000;
        await extra?.close(drainMs).catch((err) => log.warn({ err }, "closing the proxy failed"));
        await scheduler.close();
        await api.close();
        await publisher?.stop();
        await ops.close();
        await discussions.close();
        await opened.close();
        log.info({}, "sidecar stopped");
      })();
      return closing;
    },
  };
}

/** What every RPC of the scheduler service answers before the shared state is open. */
function notOpenYet(): KubemootError {
  return new KubemootError(
    ErrorCode.StateUnavailable,
    "the sidecar is starting: its shared state is not open yet; try again shortly",
  );
}
