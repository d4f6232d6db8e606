// `kubemoot-scheduler engine`: a real llama.cpp server (docs/rules/engines.md "A real llama.cpp
// engine") — node-llama-cpp on the CPU behind llama-server's routes and JSON shapes, every
// `.gguf` of a directory loaded with --parallel slots. It runs as a process of its own: a model
// that aborts inside ggml takes only this process down. Its port has the same hygiene limits
// as every other (src/net), binds loopback unless told otherwise, and no route changes a model.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import type { Llama } from "node-llama-cpp";
import { ErrorCode, invalidArgument, KubemootError } from "../errors/index.js";
import { type Logger, silentLogger } from "../log/index.js";
import { http1LimitOptions, type ListenerLimits, resolveListenerLimits, sendJson } from "../net/index.js";
import { completionRoute } from "./completion-route.js";
import type { GenerationOutput } from "./generation.js";
import { type EngineRequest, type EngineState, type Handler, readJsonBody } from "./http.js";
import { INFO_ROUTES } from "./info-routes.js";
import { engineMetrics } from "./metrics.js";
import { disposeModels, type EngineModel, loadModels } from "./model-set.js";
import { OPENAI_ROUTES } from "./openai-routes.js";
import { openLlama } from "./runtime.js";
import { TOKEN_ROUTES } from "./token-routes.js";
import { errorAnswer, llamaError } from "./wire.js";

export interface LlamaEngineOptions {
  host: string;
  port: number;
  /** The directory whose `.gguf` files are served. */
  modelsDir: string;
  /** Slots (parallel sequences) per model, llama-server's -np; default 1. */
  parallel?: number;
  /** Context per model in tokens, shared by its slots (-c); 0 (default) = the model's training context. */
  ctx?: number;
  /** llama.cpp threads; default half the machine's cores, at least 1. */
  threads?: number;
  /** Requests that may wait for a slot per model; more are answered 503. Default 64. */
  maxDeferred?: number;
  /** The largest request body (bytes); default 8 MiB. */
  maxBodyBytes?: number;
  limits?: Partial<ListenerLimits>;
  logger?: Logger;
}

export interface LlamaEngineHandle {
  readonly url: string;
  readonly address: string;
  readonly models: readonly { id: string; nCtx: number; slots: number }[];
  readonly threads: number;
  close(): Promise<void>;
}

/** Threads when none are given: half the cores (the rest for the HTTP side and neighbours). */
export function defaultThreads(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

function wholeNumber(field: string, v: number | undefined, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  if (!Number.isInteger(v) || v < min)
    throw invalidArgument(field, `expected a whole number ≥ ${min}, got ${v}`);
  return v;
}

const ROUTES: Record<string, Handler> = {
  ...INFO_ROUTES,
  ...TOKEN_ROUTES,
  ...OPENAI_ROUTES,
  "POST /completion": completionRoute,
  "POST /completions": completionRoute,
};

async function dispatch(
  state: EngineState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  log: Logger,
) {
  const url = new URL(req.url ?? "/", "http://engine");
  const method = req.method === "HEAD" ? "GET" : (req.method ?? "GET");
  const handler = ROUTES[`${method} ${url.pathname}`];
  if (!handler) {
    sendJson(res, 404, llamaError(404, "not_found_error", "File Not Found"));
    return;
  }
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  const r: EngineRequest = {
    req,
    res,
    url,
    state,
    signal: controller.signal,
    body: () => readJsonBody(req, state.maxBodyBytes),
  };
  try {
    await handler(r);
  } catch (err) {
    const a = errorAnswer(err);
    if (a.status >= 500) log.warn({ err, route: url.pathname }, "engine: request failed");
    if (!res.headersSent) sendJson(res, a.status, a.body);
    else res.end();
  }
}

export async function startLlamaEngine(o: LlamaEngineOptions): Promise<LlamaEngineHandle> {
  const log = o.logger ?? silentLogger;
  const parallel = wholeNumber("--parallel", o.parallel, 1, 1);
  const threads = wholeNumber("--threads", o.threads, defaultThreads(), 1);
  const ctx = wholeNumber("--ctx", o.ctx, 0, 0);
  const limits = resolveListenerLimits(o.limits);
  const llama: Llama = await openLlama(threads);
  let models: EngineModel[] = [];
  try {
    models = await loadModels(llama, {
      dir: o.modelsDir,
      parallel,
      ctx,
      threads,
      maxDeferred: wholeNumber("maxDeferred", o.maxDeferred, 64, 0),
    });
  } catch (err) {
    await llama.dispose();
    throw err;
  }
  let taskId = 0;
  const metrics = engineMetrics(() => ({
    processing: models.reduce((n, m) => n + m.pool.processing, 0),
    deferred: models.reduce((n, m) => n + m.pool.deferred, 0),
  }));
  const state: EngineState = {
    models,
    metrics,
    startedAtS: Math.floor(Date.now() / 1000),
    buildInfo: `node-llama-cpp-${llama.buildType}-${llama.llamaCppRelease.release}`,
    maxBodyBytes: wholeNumber("maxBodyBytes", o.maxBodyBytes, 8 * 1024 * 1024, 1),
    nextTaskId: () => taskId++,
    observe: (g: GenerationOutput) => metrics.observe(g),
  };
  const server = http.createServer({ ...http1LimitOptions(limits), noDelay: true }, (req, res) => {
    void dispatch(state, req, res, log);
  });
  server.maxConnections = limits.maxConnections;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(o.port, o.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    await disposeModels(models);
    await llama.dispose();
    throw new KubemootError(ErrorCode.InvalidConfig, `--listen: ${(err as Error).message}`, {
      field: "--listen",
      cause: err,
    });
  }
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${addr.port}`,
    address: `${host}:${addr.port}`,
    models: models.map((m) => ({ id: m.id, nCtx: m.nCtx, slots: m.pool.slots.length })),
    threads,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await disposeModels(models);
        await llama.dispose();
      })();
      return closing;
    },
  };
}
