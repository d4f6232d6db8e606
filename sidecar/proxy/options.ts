// Options of the local proxy, their defaults, and the hooks it reports through.
import type { Engine, ProviderState } from "../../src/core/index.js";
import { type ErrorReason, invalidArgument } from "../../src/errors/index.js";
import type { Logger } from "../../src/log/index.js";
import type { ListenerLimits } from "../../src/net/index.js";
import type { Scheduler } from "../../src/scheduler/index.js";
import { SETTINGS } from "../../src/settings/index.js";
import type { NumCtxPolicy } from "./num-ctx.js";
import type { Api } from "./validate.js";

/** One finished call, as the hooks and the log see it (never the prompt text). */
export interface CallRecord {
  api: Api;
  /** The model asked for. */
  requestedModel: string;
  stream: boolean;
  status: number;
  /** Set when the proxy answered an error (or the stream ended in one). */
  reason: ErrorReason | "client-gone" | "stream-error" | undefined;
  ticketId: string;
  provider: string;
  model: string;
  coldLoad: boolean;
  evicted: string[];
  queueWaitMs: number;
  /** Forward start → last byte (ms); 0 when nothing was forwarded. */
  latencyMs: number;
  /** The whole call, from its request to its end (ms). */
  durationMs: number;
  /** Forward start → first byte of the answer (ms); 0 when none came. */
  ttfbMs: number;
  estimatedPromptTokens: number;
  /** What the engine reported (prompt_eval_count / usage.prompt_tokens); 0 = not reported. */
  promptTokens: number;
  /** Of those, what the engine reused from its prompt cache; 0 = none or not reported. */
  cachedPromptTokens: number;
  outputTokens: number;
  truncated: boolean;
  numCtx: number | undefined;
  /** The engine that served the call ("ollama" until placed). */
  engine: Engine;
  /** The engine's own prompt count (POST /tokenize), when it was asked. */
  exactPromptTokens?: number;
  /** A translated call's fields with no equivalent on the engine (X-Kubemoot-Dropped). */
  dropped?: string[];
  /** The call's span, when it is sampled (docs/tracing.md): its trace's and its own id. */
  traceId?: string;
  spanId?: string;
}

export interface TruncationReport {
  ticketId: string;
  provider: string;
  model: string;
  estimatedPromptTokens: number;
  reportedPromptTokens: number;
  numCtx: number | undefined;
}

export interface ProxyHooks {
  /** Every inference call, once, when it is over (placed or not). */
  onCall?(record: CallRecord): void;
  /** A call whose engine evaluated far fewer prompt tokens than estimated (a silent cut). */
  onTruncation?(report: TruncationReport): void;
  /** Calls in flight changed. */
  onInflight?(inflight: number): void;
}

export interface ProxySettings {
  /** Largest accepted request body (bytes); larger → 413, before it is read. Default 8 MiB. */
  maxBodyBytes: number;
  /** Longest wait for a busy GPU (s); 0 = never wait. Default the scheduler's waitLimitS. */
  waitLimitS: number;
  /** Deadline of one forwarded call, from sending it to its last byte (ms). Default 120 000. */
  timeoutMs: number;
  /** Connect timeout towards a provider (ms). Default 5 000. */
  connectTimeoutMs: number;
  /** num_ctx handling (num-ctx.ts). Default "pin". */
  numCtxPolicy: NumCtxPolicy;
  /** Retry-After (s) on a gpu-busy 503 when the planner gives no wait estimate. Default 5. */
  retryAfterS: number;
  /** Renew the ticket this often during a long call (ms). Default half the scheduler's lease. */
  renewEveryMs: number;
  /** Agent for calls without X-Kubemoot-Agent. Default the scheduler's agent, else "default/proxy". */
  agent: string;
  /** What GET /api/version reports. Default "0.13.0". */
  version: string;
}

export interface ProxyOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 11434; 0 picks a free port. */
  port?: number;
  scheduler: Scheduler;
  /**
   * The providers' current states: for /api/tags, /api/ps, /v1/models, the unknown-model
   * check and contexts. `() => state.providers.peekAll()` (the watched copy, synchronous: no
   * extra latency per call) or `() => state.providers.list()` (freshness-checked). Without it
   * those lists are empty and every model is left to the scheduler.
   */
  providers?: () => ProviderState[] | Promise<ProviderState[]>;
  /**
   * Where a sidecar follows only its candidates' providers (docs/rules/state.md §10.1):
   * `fleet`, every provider's state for the model lists (/api/tags, /api/ps, /v1/models; read
   * when asked), and `models`, every model some provider offers for the unknown-model check
   * (synchronous). Without them both come from `providers`.
   */
  fleet?: () => Promise<ProviderState[]>;
  models?: () => Iterable<string>;
  logger?: Logger;
  hooks?: ProxyHooks;
  options?: Partial<ProxySettings>;
  /** Connection limits of the proxy's port (src/net/listener-limits.ts defaults). */
  limits?: Partial<ListenerLimits>;
}

export const DEFAULT_PROXY_PORT = 11434;
export const DEFAULT_MAX_BODY_BYTES = SETTINGS.proxyMaxBodyBytes.default;
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_AGENT = "default/proxy";

function positive(field: string, v: number, allowZero = false): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) {
    throw invalidArgument(
      `proxy.${field}`,
      `expected a ${allowZero ? "non-negative" : "positive"} number, got ${v}`,
    );
  }
  return v;
}

export function resolveSettings(scheduler: Scheduler, given: Partial<ProxySettings> = {}): ProxySettings {
  const cfg = scheduler.config;
  const s: ProxySettings = {
    maxBodyBytes: given.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    waitLimitS: given.waitLimitS ?? cfg.waitLimitS,
    timeoutMs: given.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    connectTimeoutMs: given.connectTimeoutMs ?? 5000,
    numCtxPolicy: given.numCtxPolicy ?? "pin",
    retryAfterS: given.retryAfterS ?? 5,
    renewEveryMs: given.renewEveryMs ?? Math.max(1000, (cfg.leaseS * 1000) / 2),
    agent: given.agent ?? (cfg.agent || DEFAULT_AGENT),
    version: given.version ?? "0.13.0",
  };
  positive("maxBodyBytes", s.maxBodyBytes);
  positive("waitLimitS", s.waitLimitS, true);
  positive("timeoutMs", s.timeoutMs);
  positive("connectTimeoutMs", s.connectTimeoutMs);
  positive("retryAfterS", s.retryAfterS, true);
  positive("renewEveryMs", s.renewEveryMs);
  if (s.numCtxPolicy !== "pin" && s.numCtxPolicy !== "pass") {
    throw invalidArgument("proxy.numCtxPolicy", `expected "pin" or "pass", got "${String(s.numCtxPolicy)}"`);
  }
  return s;
}
