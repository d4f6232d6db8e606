// One HTTP call over undici with a deadline, mapped onto EngineError.
import { Agent, type Dispatcher, request } from "undici";
import { EngineError } from "./errors.js";

export interface CallOptions {
  method: "GET" | "POST" | "HEAD";
  path: string;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  headers?: Record<string, string> | undefined;
  /** Largest answer body read (bytes); a longer one fails as "protocol". Default: no bound. */
  maxBytes?: number | undefined;
}

export interface CallResult {
  status: number;
  text: string;
}

/** A client's base URL without trailing slashes; EngineError "protocol" when it is not a URL. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EngineError("protocol", "not a valid base URL", {
      endpoint: String(raw),
      operation: "configure",
    });
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/** The keep-alive connection pool a client owns when it is given none. */
export function clientAgent(connectTimeoutMs: number): Agent {
  return new Agent({ connect: { timeout: connectTimeoutMs }, keepAliveTimeout: 4000 });
}

const REFUSED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const TIMEOUTS = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
  "ABORT_ERR",
]);

function errCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") return code;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) e = errors[0];
    else e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The body as text, destroyed and failed as "protocol" once it passes `max` bytes. */
async function boundedText(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  max: number,
  where: { endpoint: string; operation: string },
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw new EngineError("protocol", `answer larger than ${max} bytes`, where);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Sends one request; throws EngineError for refusals, timeouts and broken connections. */
export async function call(
  dispatcher: Dispatcher,
  baseUrl: string,
  opts: CallOptions,
  headersExtra?: Record<string, string>,
): Promise<CallResult> {
  const operation = `${opts.method} ${opts.path}`;
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  const headers: Record<string, string> = { accept: "application/json", ...headersExtra, ...opts.headers };
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] = "application/json";
  }
  try {
    const res = await request(new URL(opts.path, baseUrl), {
      method: opts.method,
      headers,
      body,
      dispatcher,
      signal,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    if (opts.maxBytes === undefined) return { status: res.statusCode, text: await res.body.text() };
    return {
      status: res.statusCode,
      text: await boundedText(res.body, opts.maxBytes, { endpoint: baseUrl, operation }),
    };
  } catch (err) {
    if (err instanceof EngineError) throw err;
    const code = errCode(err);
    const name = (err as { name?: string } | null)?.name;
    if (deadline.aborted || name === "TimeoutError" || (code !== undefined && TIMEOUTS.has(code))) {
      throw new EngineError("timeout", `no answer within ${opts.timeoutMs} ms`, {
        endpoint: baseUrl,
        operation,
        cause: err,
      });
    }
    if (opts.signal?.aborted) throw err;
    if (code !== undefined && REFUSED.has(code)) {
      throw new EngineError("refused", `connection refused (${code})`, {
        endpoint: baseUrl,
        operation,
        cause: err,
      });
    }
    throw new EngineError("network", (err as Error)?.message ?? String(err), {
      endpoint: baseUrl,
      operation,
      cause: err,
    });
  }
}
