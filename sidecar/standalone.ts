// Standalone: the operator (a manifests directory) with its provider publisher, the scheduler
// API and the proxy in one process, sharing one state store: the embedded in-memory store by
// default, NATS when a URL is given — nothing else changes between the two.
import type { Logger } from "pino";
import type { ListenerLimits } from "../src/net/index.js";
import { type RunningOperator, startOperator } from "../src/operator/index.js";
import type { SchedulerConfig } from "../src/scheduler/index.js";
import {
  connectNatsKv,
  type KvStore,
  MemoryKvStore,
  openStateStore,
  type StateStore,
} from "../src/state/index.js";
import { startWebView, type WebView } from "../src/web/index.js";
import { type RunningSidecar, startSidecar } from "./main.js";
import type { ProxySettings } from "./proxy/index.js";
import { proxyExtra } from "./with-proxy.js";

export interface StandaloneOptions {
  manifests: string[];
  bindingsDir: string;
  /** NATS URL(s), comma-separated; empty = the embedded store. */
  nats: string;
  listen: string;
  /** Empty disables the proxy. */
  proxyListen: string;
  config: SchedulerConfig;
  logger: Logger;
  probeIntervalMs?: number;
  proxy?: Partial<ProxySettings>;
  /** Health-only port HOST:PORT; empty or absent = none. */
  healthListen?: string;
  /** Connection limits of the API, health, proxy and web ports. */
  limits?: Partial<ListenerLimits>;
  /** The read-only web view (docs/web-view.md); absent or an empty address = none. */
  web?: { listen: string; token?: string; traceUrl?: string; labels?: Readonly<Record<string, string>> };
}

export interface RunningStandalone {
  readonly sidecar: RunningSidecar;
  readonly operator: RunningOperator;
  /** The operator's view of shared state (the same store the sidecar decides on). */
  readonly state: StateStore;
  readonly proxyAddress: string;
  /** The web view's URL; empty without one. */
  readonly webUrl: string;
  close(): Promise<void>;
}

export async function startStandalone(o: StandaloneOptions): Promise<RunningStandalone> {
  const kv: KvStore = o.nats ? await connectNatsKv({ servers: o.nats.split(",") }) : new MemoryKvStore();
  const state = await openStateStore(kv, { logger: o.logger });
  let operator: RunningOperator | undefined;
  let sidecar: RunningSidecar | undefined;
  let web: WebView | undefined;
  let proxyAddress = "";
  try {
    operator = await startOperator({
      manifests: o.manifests,
      bindingsDir: o.bindingsDir,
      state,
      logger: o.logger,
      ...(o.probeIntervalMs !== undefined ? { probeIntervalMs: o.probeIntervalMs } : {}),
    });
    await operator.publisher.probeNow();
    sidecar = await startSidecar({
      listen: o.listen,
      ...(o.healthListen ? { healthListen: o.healthListen } : {}),
      ...(o.limits ? { limits: o.limits } : {}),
      state: kv,
      config: o.config,
      logger: o.logger,
      ...(o.proxyListen
        ? {
            extras: proxyExtra(
              o.proxyListen,
              o.proxy ?? {},
              (a) => {
                proxyAddress = a;
              },
              o.limits,
            ),
          }
        : {}),
    });
    if (o.web?.listen) {
      web = await startWebView({
        listen: o.web.listen,
        state,
        logger: o.logger,
        ...(o.web.token !== undefined ? { token: o.web.token } : {}),
        ...(o.web.traceUrl ? { traceUrl: o.web.traceUrl } : {}),
        ...(o.limits ? { limits: o.limits } : {}),
        hub: { labelOf: (p) => o.web?.labels?.[p] ?? operator?.gpuLabel(p) },
      });
    }
  } catch (err) {
    await web?.close();
    await sidecar?.close();
    await operator?.stop();
    await state.close();
    await kv.close();
    throw err;
  }
  const op = operator;
  const sc = sidecar;
  const view = web;
  let closing: Promise<void> | undefined;
  return {
    sidecar: sc,
    operator: op,
    state,
    proxyAddress,
    webUrl: view?.url ?? "",
    close() {
      closing ??= (async () => {
        await view?.close();
        await sc.close();
        await op.stop();
        await state.close();
        await kv.close();
      })();
      return closing;
    },
  };
}
