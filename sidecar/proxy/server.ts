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
import { Agent, type Dispatcher } from "undici";
import type { ProviderState } from "../../src/core/index.js";
import { normalizeModelName } from "../../src/engines/index.js";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import { silentLogger } from "../../src/log/index.js";
import { type EndpointAllowlist, http1LimitOptions, resolveListenerLimits } from "../../src/net/index.js";
import { oversizedBodyDone, parseJsonObject, readBody } from "./body.js";
import { ByteBudget } from "./body-budget.js";
import { type CallContext, handleCall } from "./call.js";
import { openaiModel, openaiModelsBody, psBody, tagsBody } from "./catalog.js";
import { badRequest, ProxyError, sendJson, sendProxyError, shapeOfPath } from "./http-errors.js";
import { managementRefusal } from "./management.js";
import { DEFAULT_PROXY_PORT, type ProxyOptions, type ProxySettings, resolveSettings } from "./options.js";
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

/**
 * Refuses, before any connection, a request to an origin outside the endpoint allowlist: every
 * forward (calls, /api/show) goes through this dispatcher. Defence in depth: such providers are
 * already kept out of the scheduler's view.
 */
function allowedOrigins(list: EndpointAllowlist | undefined): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    if (list !== undefined && !list.allows(String(opts.origin ?? ""))) {
      throw new KubemootError(
        ErrorCode.ProviderFailure,
        "provider endpoint not in KUBEMOOT_PROVIDER_ENDPOINTS: nothing was sent",
      );
    }
    return dispatch(opts, handler);
  };
}

export async function startProxy(o: ProxyOptions): Promise<ProxyServer> {
  const settings = resolveSettings(o.scheduler, o.options);
  const limits = resolveListenerLimits(o.limits);
  const logger = o.logger ?? silentLogger;
  const hooks = o.hooks ?? {};
  const shutdown = new AbortController();
  // Every call in flight listens to it (and removes its listener when it ends).
  setMaxListeners(0, shutdown.signal);
  const dispatcher = new Agent({
    connect: { timeout: settings.connectTimeoutMs },
    keepAliveTimeout: 10_000,
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
  }).compose(allowedOrigins(o.scheduler.config.providerEndpoints));
  const ctx: CallContext = {
    scheduler: o.scheduler,
    settings,
    dispatcher,
    providers: o.providers,
    logger,
    hooks,
    shutdown: shutdown.signal,
    tokenCounts: new TokenCountCache(),
  };
  // Bodies held at once: twice the largest allowed (docs/deploy.md, "The sidecar's ports").
  const bodyBudget = new ByteBudget(2 * settings.maxBodyBytes);
  let inflight = 0;
  let draining = false;
  const idleWaiters = new Set<() => void>();
  const calls = new Set<Promise<void>>();

  const states = async (): Promise<ProviderState[]> => {
    if (!o.providers) return [];
    return o.providers();
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    res.once("finish", () => closeAfterOversizedBody(req));
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const api = INFERENCE[path];
    if (api !== undefined && method === "POST") {
      if (draining) {
        req.resume();
        sendProxyError(
          res,
          new ProxyError(503, "shutting-down", "the sidecar is shutting down"),
          { connection: "close", "retry-after": "1" },
          shapeOfPath(path),
        );
        return;
      }
      inflight++;
      hooks.onInflight?.(inflight);
      // The body's bytes count against the budget for as long as the call holds them; a body
      // declared over the limit is refused before it is read, so it takes none.
      const declared = Number(req.headers["content-length"]);
      const bytes = !Number.isFinite(declared)
        ? settings.maxBodyBytes
        : declared > settings.maxBodyBytes
          ? 0
          : declared;
      const gone = new AbortController();
      res.once("close", () => gone.abort(new Error("the client went away")));
      const p = bodyBudget
        .acquire(bytes, AbortSignal.any([gone.signal, shutdown.signal]))
        .then(
          (release) => handleCall(ctx, api, req, res).finally(release),
          () => {
            // The client left, or the sidecar is shutting down, while the call waited its turn.
            if (!res.headersSent && !res.destroyed) {
              sendProxyError(
                res,
                new ProxyError(503, "shutting-down", "the sidecar is shutting down"),
                { connection: "close", "retry-after": "1" },
                shapeOfPath(path),
              );
            }
          },
        )
        .catch((err: unknown) => {
          logger.error({ err }, "proxy: call handler failed");
          sendProxyError(res, new ProxyError(500, "internal", "internal error"), {}, shapeOfPath(path));
        })
        .finally(() => {
          calls.delete(p);
          inflight--;
          hooks.onInflight?.(inflight);
          if (inflight === 0) for (const w of idleWaiters) w();
        });
      calls.add(p);
      return;
    }
    serveOther(method, path, req, res).catch((err: unknown) => {
      if (err instanceof ProxyError) sendProxyError(res, err, {}, shapeOfPath(path));
      else {
        logger.error({ err, path }, "proxy: request failed");
        sendProxyError(res, new ProxyError(500, "internal", "internal error"), {}, shapeOfPath(path));
      }
    });
  };

  const serveOther = async (method: string, path: string, req: IncomingMessage, res: ServerResponse) => {
    const get = method === "GET" || method === "HEAD";
    if (path === "/" && get) {
      const text = "Ollama is running";
      res.writeHead(200, {
        "content-type": "text/plain; charset=utf-8",
        "content-length": String(text.length),
      });
      res.end(method === "HEAD" ? undefined : text);
      return;
    }
    if (path === "/api/version" && get) return sendJson(res, 200, { version: settings.version });
    if (path === "/api/tags" && get) return sendJson(res, 200, tagsBody(await states()));
    if (path === "/api/ps" && get) return sendJson(res, 200, psBody(await states()));
    if (path === "/v1/models" && get) return sendJson(res, 200, openaiModelsBody(await states()));
    if (path.startsWith("/v1/models/") && get) return retrieveModel(path.slice("/v1/models/".length), res);
    if (path === "/api/show" && method === "POST") return show(req, res);
    req.resume();
    const managed = managementRefusal(method, path);
    if (managed) throw managed;
    throw new ProxyError(404, "not-found", `no route ${method} ${path}`);
  };

  /** GET /v1/models/{id} (ids may hold slashes: "hf.co/org/model:tag"). */
  const retrieveModel = async (raw: string, res: ServerResponse) => {
    let id: string;
    try {
      id = decodeURIComponent(raw);
    } catch {
      throw badRequest("not a valid URL-encoded model id", "model");
    }
    const entry = openaiModel(await states(), id);
    if (!entry) {
      throw new ProxyError(404, "model-not-found", `The model \`${id}\` does not exist on this fleet`, {
        model: id,
      });
    }
    sendJson(res, 200, entry);
  };

  /** POST /api/show: asked of a ready provider that has the model (no ticket: it loads nothing). */
  const show = async (req: IncomingMessage, res: ServerResponse) => {
    const body = parseJsonObject(await readBody(req, settings.maxBodyBytes));
    const raw = typeof body.model === "string" ? body.model : typeof body.name === "string" ? body.name : "";
    if (raw.trim() === "") throw badRequest("is required", "model");
    const model = normalizeModelName(raw);
    const has = (s: ProviderState) =>
      s.ready &&
      (s.loadedModels.includes(model) ||
        model in (s.loadedModelFootprintsMiB ?? {}) ||
        model in (s.availableModelFootprintsMiB ?? {}));
    const target = (await states()).find(has);
    if (!target)
      throw new ProxyError(404, "model-not-found", `model "${model}" not found, try pulling it first`);
    const base = new URL(target.endpoint);
    try {
      const up = await dispatcher.request({
        origin: base.origin,
        path: `${base.pathname.replace(/\/+$/, "")}/api/show`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...body, model }),
        signal: AbortSignal.timeout(Math.min(settings.timeoutMs, 30_000)),
      });
      const text = await up.body.text();
      res.writeHead(up.statusCode, {
        "content-type": String(up.headers["content-type"] ?? "application/json"),
        "content-length": String(Buffer.byteLength(text)),
        "x-kubemoot-provider": target.name,
      });
      res.end(text);
    } catch (err) {
      throw new ProxyError(502, "provider-failure", `provider ${target.name}: ${(err as Error).message}`);
    }
  };

  const server: Server = createServer(
    { keepAlive: true, noDelay: true, ...http1LimitOptions(limits) },
    onRequest,
  );
  server.maxConnections = limits.maxConnections;
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT" && socket.writable) {
      // The header or request deadline passed (ListenerLimits).
      socket.end(
        'HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":"request not received in time","reason":"timeout"}',
      );
    } else if (socket.writable) {
      socket.end(
        'HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":"malformed HTTP request","reason":"bad-request"}',
      );
    } else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port ?? DEFAULT_PROXY_PORT, o.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (err) => logger.error({ err }, "proxy: server error"));
  const addr = server.address() as AddressInfo;
  const address = `${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}`;
  logger.info(
    { listen: address, numCtxPolicy: settings.numCtxPolicy, waitLimitS: settings.waitLimitS },
    "proxy listening",
  );

  const drain = async (timeoutMs: number): Promise<boolean> => {
    if (!draining) {
      draining = true;
      server.close();
      server.closeIdleConnections();
    }
    if (inflight === 0) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(
        () => {
          idleWaiters.delete(done);
          resolve(inflight === 0);
        },
        Math.max(0, timeoutMs),
      );
      const done = () => {
        clearTimeout(timer);
        idleWaiters.delete(done);
        resolve(true);
      };
      idleWaiters.add(done);
    });
  };

  let closing: Promise<void> | undefined;
  return {
    port: addr.port,
    address,
    get inflight() {
      return inflight;
    },
    settings,
    drain,
    close(drainMs = 0) {
      closing ??= (async () => {
        const drained = await drain(drainMs);
        if (!drained) {
          logger.warn({ inflight }, "proxy: aborting calls still in flight");
          shutdown.abort();
          await Promise.race([
            Promise.allSettled([...calls]),
            new Promise((r) => setTimeout(r, 5000).unref()),
          ]);
        }
        server.closeAllConnections();
        await dispatcher.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}
