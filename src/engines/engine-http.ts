// The engines' probe calls: GET or POST with a deadline and a bounded answer. An error status
// is returned (a probe decides what a 404 means: an endpoint the engine does not have, or a
// wrong engine), never thrown; refusals, timeouts and broken connections throw EngineError.
import type { Dispatcher } from "undici";
import { EngineError } from "./errors.js";
import { call, clientAgent, normalizeBaseUrl } from "./http.js";

/** No probe answer is legitimately larger: /metrics of a busy engine is tens of KiB. */
export const PROBE_MAX_BYTES = 4 * 1024 * 1024;

export interface EngineHttpOptions {
  baseUrl: string;
  /** Deadline of each call; default 5 s. */
  timeoutMs?: number;
  maxBytes?: number;
  /** A shared undici dispatcher; by default one of its own (closed by close()). */
  dispatcher?: Dispatcher;
  headers?: Record<string, string>;
}

export interface EngineAnswer {
  status: number;
  text: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: unknown;
}

export class EngineHttp {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly headers: Record<string, string> | undefined;

  constructor(o: EngineHttpOptions) {
    this.baseUrl = normalizeBaseUrl(o.baseUrl);
    this.timeoutMs = o.timeoutMs ?? 5000;
    this.maxBytes = o.maxBytes ?? PROBE_MAX_BYTES;
    this.headers = o.headers;
    this.ownsDispatcher = o.dispatcher === undefined;
    this.dispatcher = o.dispatcher ?? clientAgent(Math.min(this.timeoutMs, 5000));
  }

  async get(path: string, accept = "application/json"): Promise<EngineAnswer> {
    return this.send("GET", path, undefined, accept);
  }

  async post(path: string, body: unknown): Promise<EngineAnswer> {
    return this.send("POST", path, body, "application/json");
  }

  /** An EngineError for an answer the probe cannot use. */
  fail(path: string, answer: EngineAnswer | undefined, message: string): EngineError {
    const status = answer?.status;
    return new EngineError(status !== undefined && status >= 400 ? "http" : "protocol", message, {
      endpoint: this.baseUrl,
      operation: `GET ${path}`,
      ...(status !== undefined && status >= 400 ? { status } : {}),
    });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async send(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    accept: string,
  ): Promise<EngineAnswer> {
    const res = await call(
      this.dispatcher,
      this.baseUrl,
      { method, path, body, timeoutMs: this.timeoutMs, maxBytes: this.maxBytes, headers: { accept } },
      this.headers,
    );
    let json: unknown;
    try {
      json = res.text === "" ? undefined : JSON.parse(res.text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text: res.text, json };
  }
}
