// A client of Ollama's management API over undici: version, ps, tags, show, load, unload.
// Every call has a deadline; every failure is an EngineError (refused, timeout, network,
// http, protocol). Answers are checked for the fields the callers rely on.
import type { Dispatcher } from "undici";
import { EngineError } from "./errors.js";
import { call, clientAgent, normalizeBaseUrl } from "./http.js";
import type {
  OllamaGenerateResponse,
  OllamaKeepAlive,
  OllamaPsModel,
  OllamaShowResponse,
  OllamaTagModel,
} from "./ollama-wire.js";

export interface OllamaClientOptions {
  /** e.g. http://ollama.ollama-rig1:11434 */
  baseUrl: string;
  /** Deadline of the quick calls (version, ps, tags, show); default 10 s. */
  timeoutMs?: number;
  /** Deadline of load and unload, which wait for the model; default 10 minutes. */
  loadTimeoutMs?: number;
  /** Connect timeout; default min(timeoutMs, 5 s). */
  connectTimeoutMs?: number;
  /** A shared undici dispatcher; by default the client owns one (closed by close()). */
  dispatcher?: Dispatcher;
  headers?: Record<string, string>;
}

export interface LoadOptions {
  keepAlive?: OllamaKeepAlive;
  /** Loads with this context window (options.num_ctx). */
  numCtx?: number;
  signal?: AbortSignal;
}

export interface CallSignal {
  signal?: AbortSignal;
}

export class OllamaClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly loadTimeoutMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly headers: Record<string, string> | undefined;

  constructor(options: OllamaClientOptions) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.loadTimeoutMs = options.loadTimeoutMs ?? 600_000;
    this.headers = options.headers;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ?? clientAgent(options.connectTimeoutMs ?? Math.min(this.timeoutMs, 5000));
  }

  private async json(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const operation = `${method} ${path}`;
    const res = await call(
      this.dispatcher,
      this.baseUrl,
      { method, path, body, timeoutMs, signal },
      this.headers,
    );
    let parsed: unknown;
    try {
      parsed = res.text === "" ? undefined : JSON.parse(res.text);
    } catch {
      parsed = undefined;
    }
    if (res.status >= 400) {
      const message =
        parsed && typeof parsed === "object" && typeof (parsed as { error?: unknown }).error === "string"
          ? (parsed as { error: string }).error
          : res.text.slice(0, 200) || `status ${res.status}`;
      throw new EngineError("http", `${res.status}: ${message}`, {
        endpoint: this.baseUrl,
        operation,
        status: res.status,
      });
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new EngineError(
        "protocol",
        `expected a JSON object, got ${JSON.stringify(res.text.slice(0, 80))}`,
        {
          endpoint: this.baseUrl,
          operation,
          status: res.status,
        },
      );
    }
    return parsed as Record<string, unknown>;
  }

  private list<T>(obj: Record<string, unknown>, operation: string): T[] {
    const models = obj.models;
    if (models === null || models === undefined) return [];
    if (!Array.isArray(models)) {
      throw new EngineError("protocol", `"models" is not a list`, { endpoint: this.baseUrl, operation });
    }
    return models.filter(
      (m): m is T =>
        typeof m === "object" && m !== null && typeof (m as { name?: unknown }).name === "string",
    );
  }

  /** GET /api/version → the version string. */
  async version(opts: CallSignal = {}): Promise<string> {
    const obj = await this.json("GET", "/api/version", undefined, this.timeoutMs, opts.signal);
    if (typeof obj.version !== "string") {
      throw new EngineError("protocol", `"version" is missing`, {
        endpoint: this.baseUrl,
        operation: "GET /api/version",
      });
    }
    return obj.version;
  }

  /** GET /api/ps → the loaded (and loading) models. */
  async ps(opts: CallSignal = {}): Promise<OllamaPsModel[]> {
    const obj = await this.json("GET", "/api/ps", undefined, this.timeoutMs, opts.signal);
    return this.list<OllamaPsModel>(obj, "GET /api/ps");
  }

  /** GET /api/tags → the models on disk. */
  async tags(opts: CallSignal = {}): Promise<OllamaTagModel[]> {
    const obj = await this.json("GET", "/api/tags", undefined, this.timeoutMs, opts.signal);
    return this.list<OllamaTagModel>(obj, "GET /api/tags");
  }

  /** POST /api/show {model}. A model that is not there throws EngineError (status 404). */
  async show(model: string, opts: CallSignal = {}): Promise<OllamaShowResponse> {
    return (await this.json(
      "POST",
      "/api/show",
      { model },
      this.timeoutMs,
      opts.signal,
    )) as OllamaShowResponse;
  }

  /** POST /api/generate {model} (no prompt): loads the model; resolves once it is resident. */
  async load(model: string, opts: LoadOptions = {}): Promise<OllamaGenerateResponse> {
    const body: Record<string, unknown> = { model };
    if (opts.keepAlive !== undefined) body.keep_alive = opts.keepAlive;
    if (opts.numCtx !== undefined) body.options = { num_ctx: opts.numCtx };
    return (await this.json(
      "POST",
      "/api/generate",
      body,
      this.loadTimeoutMs,
      opts.signal,
    )) as unknown as OllamaGenerateResponse;
  }

  /** POST /api/generate {model, keep_alive: 0}: unloads the model once it is idle. */
  async unload(model: string, opts: CallSignal = {}): Promise<OllamaGenerateResponse> {
    return (await this.json(
      "POST",
      "/api/generate",
      { model, keep_alive: 0 },
      this.loadTimeoutMs,
      opts.signal,
    )) as unknown as OllamaGenerateResponse;
  }

  /** Closes the client's own connection pool (not a shared dispatcher). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
