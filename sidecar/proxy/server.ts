// The proxy's HTTP server: routing, in-flight accounting and graceful shutdown.
//
//   POST /api/chat, /api/generate, /v1/chat/completions   placed and forwarded (call.ts)
//   POST /v1/completions, /v1/responses                    placed and forwarded (call.ts)
//   POST /api/embed, /api/embeddings, /v1/embeddings       placed and forwarded (call.ts)
//   POST /api/show                                         forwarded to a provider that has the model
//   GET  /api/tags, /api/ps, /v1/models, /v1/models/{id}   aggregated over the providers' states
//   /api/pull, /api/delete, /api/copy, /api/create, ...    403: models are the operator's (management.ts)
//   GET  /api/version                                      the configured version
//   GET, HEAD /                                            "Ollama is running" (client health checks)
import { setMaxListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ProviderState } from "../../src/core/index.js";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import { silentLogger } from "../../src/log/index.js";
import { http1LimitOptions, resolveListenerLimits } from "../../src/net/index.js";
import { oversizedBodyDone } from "./body.js";
import { ByteBudget } from "./body-budget.js";
import type { CallContext } from "./call-context.js";
import { answerClientError } from "./client-errors.js";
import { providerDispatcher } from "./dispatcher.js";
import { sendError, shapeOfPath } from "./http-errors.js";
import { CallsInFlight } from "./in-flight.js";
import { type InferenceDoor, serveInference } from "./inference-route.js";
import { DEFAULT_PROXY_PORT, type ProxyOptions, type ProxySettings, resolveSettings } from "./options.js";
import { type OtherRoutes, serveOther } from "./other-routes.js";
import { TokenCountCache } from "./tokenize.js";
import type { Api } from "./validate.js";

export interface ProxyServer {
  readonly port: number;
  /** "host:port" as bound. */
  readonly address: string;
  /** Inference calls in flight (placing, waiting, forwarding). */
  readonly inflight: number;
  readonly settings: ProxySettings;
  /**
   * Stops accepting calls (new ones get 503 shutting-down) and waits, at most `timeoutMs`, for
   * the calls in flight to finish. Resolves true when none is left.
   */
  drain(timeoutMs: number): Promise<boolean>;
  /**
   * Drains for at most `drainMs` (default 0), then aborts what is left (each call releases its
   * ticket on the way out) and closes the server and its connections. Idempotent.
   */
  close(drainMs?: number): Promise<void>;
}

const INFERENCE: Record<string, Api> = {
  "/api/chat": "chat",
  "/api/generate": "generate",
  "/v1/chat/completions": "openai",
  "/v1/completions": "completions",
  "/v1/responses": "responses",
  "/api/embed": "embed",
  "/api/embeddings": "embeddings",
  "/v1/embeddings": "openai-embed",
};

/**
 * After a 413 for an oversized body: once the rest of the body has been read and discarded, the
 * connection is closed with a FIN. Closing while the client is still sending would answer its
 * data with a reset, which can discard our answer before the client reads it.
 */
function closeAfterOversizedBody(req: IncomingMessage): void {
  void oversizedBodyDone(req)?.then((ended) => {
    if (ended) req.socket?.end();
  });
}

/** The request handler: inference calls through their door, everything else by serveOther. */
function router(door: InferenceDoor, other: OtherRoutes) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    res.once("finish", () => closeAfterOversizedBody(req));
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const api = INFERENCE[path];
    if (api !== undefined && method === "POST") {
      serveInference(door, api, path, req, res);
      return;
    }
    serveOther(other, method, path, req, res).catch((err: unknown) => {
      if (!KubemootError.is(err)) door.ctx.logger.error({ err, path }, "proxy: request failed");
      sendError(
        res,
        KubemootError.is(err) ? err : new KubemootError(ErrorCode.Internal, "internal error"),
        {},
        shapeOfPath(path),
      );
    });
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

export async function startProxy(o: ProxyOptions): Promise<ProxyServer> {
  const settings = resolveSettings(o.scheduler, o.options);
  const limits = resolveListenerLimits(o.limits);
  const logger = o.logger ?? silentLogger;
  const hooks = o.hooks ?? {};
  const shutdown = new AbortController();
  // Every call in flight listens to it (and removes its listener when it ends).
  setMaxListeners(0, shutdown.signal);
  const dispatcher = providerDispatcher(settings, o.scheduler.config.providerEndpoints);
  const ctx: CallContext = {
    scheduler: o.scheduler,
    settings,
    dispatcher,
    providers: o.providers,
    models: o.models,
    logger,
    hooks,
    shutdown: shutdown.signal,
    tokenCounts: new TokenCountCache(),
  };
  const calls = new CallsInFlight(hooks);
  let draining = false;
  const door: InferenceDoor = {
    ctx,
    calls,
    // Bodies held at once: twice the largest allowed (docs/deploy.md, "The sidecar's ports").
    bodyBudget: new ByteBudget(2 * settings.maxBodyBytes),
    shutdown: shutdown.signal,
    draining: () => draining,
  };
  const providers = o.providers;
  const fleet = o.fleet;
  const states = async (): Promise<ProviderState[]> => (fleet ? fleet() : providers ? providers() : []);
  const server: Server = createServer(
    { keepAlive: true, noDelay: true, ...http1LimitOptions(limits) },
    router(door, { settings, dispatcher, states }),
  );
  server.maxConnections = limits.maxConnections;
  server.on("clientError", answerClientError);
  await listen(server, o.port ?? DEFAULT_PROXY_PORT, o.host ?? "127.0.0.1");
  server.on("error", (err) => logger.error({ err }, "proxy: server error"));
  const addr = server.address() as AddressInfo;
  const address = `${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}`;
  logger.info(
    { listen: address, numCtxPolicy: settings.numCtxPolicy, waitLimitS: settings.waitLimitS },
    "proxy listening",
  );

  const drain = (timeoutMs: number): Promise<boolean> => {
    if (!draining) {
      draining = true;
      server.close();
      server.closeIdleConnections();
    }
    return calls.idle(timeoutMs);
  };
  let closing: Promise<void> | undefined;
  const close = async (drainMs: number): Promise<void> => {
    if (!(await drain(drainMs))) {
      logger.warn({ inflight: calls.size }, "proxy: aborting calls still in flight");
      shutdown.abort();
      await calls.settled(5000);
    }
    server.closeAllConnections();
    await dispatcher.close().catch(() => undefined);
  };
  return {
    port: addr.port,
    address,
    get inflight() {
      return calls.size;
    },
    settings,
    drain,
    close(drainMs = 0) {
      closing ??= close(drainMs);
      return closing;
    },
  };
}
