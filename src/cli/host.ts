// What the CLI needs to start the sidecar's processes (docs/design.md §3): src/ never imports
// sidecar/, so the CLI declares the starts it needs here and the composition root
// (bin/kubemoot-scheduler.js) passes sidecar/'s implementation (sidecar/cli-host.ts) to main.
import type { Logger } from "pino";
import type { ListenerLimits } from "../net/index.js";
import type { RunningOperator } from "../operator/index.js";
import type { PublishedProvider } from "../publisher/index.js";
import type { SchedulerConfig } from "../scheduler/index.js";
import type { StateStoreOptions } from "../state/index.js";

/** The read-only web view (docs/web-view.md), as --web-listen, --web-token-file and --web-trace-url give it. */
export interface WebLaunch {
  /** HOST:PORT; empty = no web view. */
  listen: string;
  token?: string;
  /** The trace link template, checked ({traceId} in an http(s) URL); absent = the id shown as text. */
  traceUrl?: string;
  /** Provider → GPU name to show (the demo's cards); else the ModelProviders' `gpu` labels. */
  labels?: Readonly<Record<string, string>>;
}

/** The proxy's settings the CLI takes (flags and variables). */
export interface ProxyLaunch {
  maxBodyBytes?: number;
}

export interface SidecarLaunch {
  /** API address HOST:PORT. */
  listen: string;
  /** Health-only port HOST:PORT; empty = none. */
  healthListen: string;
  /** Proxy address HOST:PORT; empty = no proxy. */
  proxyListen: string;
  proxy: ProxyLaunch;
  limits: ListenerLimits;
  /** "memory", or NATS URL(s), comma-separated. */
  state: string;
  stateOptions: Pick<StateStoreOptions, "nats" | "replicas" | "keyLayout">;
  config: SchedulerConfig;
  logger: Logger;
  /** Providers this process probes and publishes itself. */
  providers: PublishedProvider[];
  probeIntervalMs: number;
  drainMs: number;
  /**
   * Ends the start while the shared state is still opening (SIGTERM): startSidecar then closes
   * what it started and rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /** Called once the API (and health) port listens, before the shared state is open. */
  onListening?: (api: { readonly address: string; readonly healthAddress: string }) => void;
}

export interface LaunchedSidecar {
  readonly api: { readonly address: string; readonly healthAddress: string };
  /** "host:port" of the proxy; empty without one. */
  readonly proxyAddress: string;
  close(): Promise<void>;
}

export interface StandaloneLaunch {
  manifests: string[];
  bindingsDir: string;
  /** NATS URL(s), comma-separated; empty = the embedded store. */
  nats: string;
  listen: string;
  /** Empty: no proxy. */
  proxyListen: string;
  healthListen?: string;
  limits?: ListenerLimits;
  proxy?: ProxyLaunch;
  config: SchedulerConfig;
  logger: Logger;
  probeIntervalMs?: number;
  /** The read-only web view (docs/web-view.md); absent or an empty address = none. */
  web?: WebLaunch;
}

export interface LaunchedStandalone {
  readonly sidecar: { readonly api: { readonly address: string } };
  readonly operator: RunningOperator;
  readonly state: { readonly kind: string };
  readonly proxyAddress: string;
  /** The web view's URL (http://host:port/); empty without one. */
  readonly webUrl: string;
  close(): Promise<void>;
}

/** Starts the processes of `sidecar`, `standalone` and `demo`. */
export interface SidecarHost {
  startSidecar(o: SidecarLaunch): Promise<LaunchedSidecar>;
  startStandalone(o: StandaloneLaunch): Promise<LaunchedStandalone>;
}
