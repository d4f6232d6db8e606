// The emulator's HTTP server: routing, error handling, the refuse-connections fault, and a
// clean shutdown.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { hostname } from "node:os";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { sendJson, sendText } from "../net/index.js";
import { type EmulatorState, emulatorState, handleAdmin } from "./admin-api.js";
import type { ModelSpec } from "./catalog.js";
import { type Clock, ScaledClock, type TimerHandle } from "./clock.js";
import { type EmulatorOptions, type ResolvedConfig, resolveConfig } from "./config.js";
import type { EmulatorCore, RequestContext } from "./core.js";
import { renderDcgmMetrics } from "./dcgm-metrics.js";
import { handleEmbed, handleEmbeddings, handleOpenAIEmbeddings } from "./embeddings.js";
import { engineServer } from "./engines/index.js";
import { type FaultRule, FaultSet, validateFaultRules } from "./faults.js";
import { OllamaGpu } from "./gpu.js";
import type { GpuSnapshot } from "./gpu-types.js";
import { HttpError, sendError } from "./http-util.js";
import { openaiError } from "./inference.js";
import { handleChat, handleGenerate, handlePs, handleShow, handleTags, handleVersion } from "./ollama-api.js";
import { handleChatCompletions, handleModels } from "./openai-api.js";
import { handleCompletions } from "./openai-completions.js";

export interface EmulatorHandle {
  /** Base URL, e.g. http://127.0.0.1:11434 */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly config: ResolvedConfig;
  /** The GPU model's raw state (emulated ms). */
  gpu(): GpuSnapshot;
  /** What GET /_emulator/state answers. */
  state(): EmulatorState;
  faults(): FaultRule[];
  /** Replaces the fault rules (validated; throws KubemootError on a bad rule). */
  setFaults(rules: FaultRule[]): void;
  /** Drops every model and request at once and clears the faults. */
  reset(): void;
  /** Stops listening, ends every connection and timer. Idempotent. */
  close(): Promise<void>;
}

type Handler = (ctx: RequestContext) => Promise<void>;

function route(method: string, path: string, dcgm: boolean): Handler | undefined {
  const get = method === "GET" || method === "HEAD";
  switch (path) {
    case "/":
      return get
        ? async (ctx) => {
            sendText(ctx.res, 200, "Ollama is running");
          }
        : undefined;
    case "/api/version":
      return get ? handleVersion : undefined;
    case "/api/tags":
      return get ? handleTags : undefined;
    case "/api/ps":
      return get ? handlePs : undefined;
    case "/api/show":
      return method === "POST" ? handleShow : undefined;
    case "/api/chat":
      return method === "POST" ? handleChat : undefined;
    case "/api/generate":
      return method === "POST" ? handleGenerate : undefined;
    case "/api/embed":
      return method === "POST" ? handleEmbed : undefined;
    case "/api/embeddings":
      return method === "POST" ? handleEmbeddings : undefined;
    case "/v1/embeddings":
      return method === "POST" ? handleOpenAIEmbeddings : undefined;
    case "/v1/chat/completions":
      return method === "POST" ? handleChatCompletions : undefined;
    case "/v1/completions":
      return method === "POST" ? handleCompletions : undefined;
    case "/v1/models":
      return get ? handleModels : undefined;
    case "/metrics":
      return dcgm && get
        ? async (ctx) => {
            sendText(
              ctx.res,
              200,
              renderDcgmMetrics(ctx.core.gpu.snapshot(), hostname(), `GPU-emulated-${ctx.core.config.port}`),
              "text/plain; version=0.0.4; charset=utf-8",
            );
          }
        : undefined;
    default:
      return undefined;
  }
}

/** Starts an emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  const config = resolveConfig(options);
  const clock: Clock = options.clock ?? new ScaledClock(config.timeScale);
  const ownsClock = options.clock === undefined;
  const catalog = new Map<string, ModelSpec>(config.models.map((m) => [m.name, m]));
  let engine: ReturnType<typeof engineServer> | undefined;
  try {
    // A personality (vLLM, llama.cpp, SGLang) serves one model, loaded from the start.
    engine = config.engine === "ollama" ? undefined : engineServer(config, clock);
  } catch (err) {
    if (ownsClock) clock.dispose();
    throw err;
  }
  const gpu = engine?.gpu ?? new OllamaGpu(config.gpu, catalog, clock, config.defaultContextLength);
  const faults = new FaultSet(config.faults, config.seed);
  let completionId = 0;
  const servers = new Set<Server>();
  let current: Server | undefined;
  let port = config.port;
  let closed = false;
  let refuseTimer: TimerHandle | undefined;

  const core: EmulatorCore = {
    config,
    gpu,
    clock,
    catalog,
    faults,
    startedAt: Date.now(),
    faultsChanged: () => applyRefuse(),
    nextCompletionId: () => ++completionId,
    traces: [],
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    req.on("error", () => {});
    res.on("error", () => {});
    const method = req.method ?? "GET";
    let path = "/";
    try {
      path = new URL(req.url ?? "/", "http://emulator").pathname;
    } catch {
      path = req.url ?? "/";
    }
    const ctx: RequestContext = { core, req, res, path, method };
    noteTrace(core, req, path);
    const handler = path.startsWith("/_emulator/")
      ? handleAdmin
      : engine
        ? engine.route(method, path)
        : route(method, path, config.dcgm);
    if (!handler) {
      req.resume();
      if (engine) engine.notFound(res);
      else sendText(res, 404, "404 page not found");
      return;
    }
    handler(ctx).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (res.destroyed) return;
      if (res.headersSent) {
        res.end();
        return;
      }
      if (path.startsWith("/v1/")) sendJson(res, status, openaiError(message, status));
      else sendError(res, status, message);
    });
  };

  // Engines that trace continue the caller's context: the emulator only records what it got.
  function noteTrace(c: EmulatorCore, req: IncomingMessage, p: string): void {
    const tp = req.headers.traceparent;
    if (typeof tp !== "string" || p.startsWith("/_emulator/")) return;
    const ts = req.headers.tracestate;
    c.traces.push({
      path: p,
      traceparent: tp.slice(0, 128),
      ...(typeof ts === "string" ? { tracestate: ts.slice(0, 512) } : {}),
    });
    if (c.traces.length > 256) c.traces.shift();
  }

  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const server = createServer({ keepAlive: true }, onRequest);
      server.on("clientError", (_err, socket) => {
        if (socket.writable)
          socket.end(
            'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n{"error":"bad request"}',
          );
        else socket.destroy();
      });
      server.once("error", reject);
      server.listen(port, config.host, () => {
        server.off("error", reject);
        server.on("error", () => {});
        const addr = server.address();
        if (addr && typeof addr === "object") port = addr.port;
        servers.add(server);
        server.once("close", () => servers.delete(server));
        current = server;
        resolve();
      });
    });

  const stopListening = () => {
    const s = current;
    current = undefined;
    if (!s) return;
    s.close();
    s.closeIdleConnections();
  };

  function applyRefuse(): void {
    if (closed) return;
    const rule = faults.has("refuse");
    refuseTimer?.cancel();
    refuseTimer = undefined;
    if (rule) {
      stopListening();
      if (rule.ms !== undefined) {
        refuseTimer = clock.at(clock.now() + rule.ms, () => {
          faults.remove("refuse");
          applyRefuse();
        });
      }
    } else if (!current) {
      listen().catch((err: unknown) => {
        process.emitWarning(
          `emulator: cannot listen again on ${config.host}:${port}: ${(err as Error).message}`,
        );
      });
    }
  }

  try {
    await listen();
  } catch (err) {
    if (ownsClock) clock.dispose();
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`,
      { field: "listen", cause: err },
    );
  }
  if (faults.has("refuse")) applyRefuse();
  const urlHost = config.host.includes(":") ? `[${config.host}]` : config.host;
  const displayHost = urlHost === "0.0.0.0" || urlHost === "[::]" ? "127.0.0.1" : urlHost;

  return {
    get url() {
      return `http://${displayHost}:${port}`;
    },
    host: config.host,
    get port() {
      return port;
    },
    config,
    gpu: () => gpu.snapshot(),
    state: () => emulatorState(core),
    faults: () => faults.list(),
    setFaults(rules) {
      faults.set(validateFaultRules(rules));
      applyRefuse();
    },
    reset() {
      gpu.reset();
      faults.set([]);
      applyRefuse();
    },
    async close() {
      if (closed) return;
      closed = true;
      refuseTimer?.cancel();
      gpu.reset("emulator shutting down");
      const waits = [...servers].map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      );
      current = undefined;
      await Promise.all(waits);
      if (ownsClock) clock.dispose();
    },
  };
}
