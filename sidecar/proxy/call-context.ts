// The shapes the stages of a proxied call share (README.md in this folder, "Per call"): what
// every call runs with, and what forwarding is given and gives back. A leaf: it imports types
// only, so that each stage can use them without importing another.
import type { ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import type { ProviderState } from "../../src/core/index.js";
import type { KubemootError } from "../../src/errors/index.js";
import type { Logger } from "../../src/log/index.js";
import type { Scheduler } from "../../src/scheduler/index.js";
import type { StreamReport } from "./framing.js";
import type { ProxyHooks, ProxySettings } from "./options.js";
import type { TokenCountCache } from "./tokenize.js";
import type { Translation } from "./translate/index.js";
import type { Api } from "./validate.js";

/** What every call of one proxy runs with. */
export interface CallContext {
  scheduler: Scheduler;
  settings: ProxySettings;
  dispatcher: Dispatcher;
  providers: (() => ProviderState[] | Promise<ProviderState[]>) | undefined;
  /** Every model some provider offers, fleet-wide (ProxyOptions.models); else from `providers`. */
  models?: (() => Iterable<string>) | undefined;
  logger: Logger;
  hooks: ProxyHooks;
  /** Aborted when the proxy shuts down (in-flight calls end, their tickets are released). */
  shutdown: AbortSignal;
  /** Engines' exact prompt counts, shared by the calls in flight (tokenize.ts). */
  tokenCounts?: TokenCountCache;
}

/** One placed call as forwarding sees it (forward.ts builds it from the call's state). */
export interface ForwardInput {
  dispatcher: Dispatcher;
  api: Api;
  /** An Ollama-API call sent to an engine's OpenAI route, and its answer brought back. */
  translation?: Translation;
  endpoint: string;
  provider: string;
  model: string;
  body: string;
  stream: boolean;
  /** SSE: drop the usage chunk the proxy requested on the caller's behalf. */
  hideUsage: boolean;
  res: ServerResponse;
  /** Attribution headers for the answer. */
  headers: Record<string, string>;
  /** Client gone, or shutdown. */
  signal: AbortSignal;
  /** The client went away (to tell it from a timeout or shutdown). */
  clientGone: () => boolean;
  timeoutMs: number;
  retryAfterS: number;
}

/** Whether the forward's own deadline passed (to tell a timeout from other aborts). */
export interface DeadlineState {
  readonly aborted: boolean;
}

/** Brings the provider's answer to the client (forward-buffered.ts, forward-stream.ts). */
export type AnswerReader = (
  i: ForwardInput,
  data: Dispatcher.ResponseData,
  /** When the forward began (performance.now()). */
  started: number,
  deadline: DeadlineState,
) => Promise<ForwardOutcome>;

export type ForwardOutcome =
  /** The whole answer went to the client. */
  | { kind: "ok"; report: StreamReport; ttfbMs: number; latencyMs: number; status: number }
  /** The provider failed before anything was sent; nothing was written to the client. */
  | {
      kind: "failed";
      error: KubemootError;
      providerFault: boolean;
      latencyMs: number;
      unreachable?: boolean;
    }
  /** The stream began and then failed; the client got an error unit at its end. */
  | {
      kind: "broken";
      message: string;
      report: StreamReport;
      ttfbMs: number;
      latencyMs: number;
      unreachable?: boolean;
    }
  /**
   * The client went away; the upstream request was aborted. `answered`: the provider had begun
   * its answer (so the model was there and working).
   */
  | { kind: "client-gone"; answered: boolean; ttfbMs: number; latencyMs: number };
