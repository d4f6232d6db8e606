// The webhook arm's read: one GET over undici with the rules a privileged, credentialed
// request needs. https only (checked before any I/O), redirects never followed (a 3xx fails,
// so the credential cannot be forwarded to another endpoint), the body capped at 1 MiB while
// it streams (a missing or lying Content-Length changes nothing), one deadline for the whole
// exchange, `caBundle` as the only trust anchors when given, and exactly one credential.
import { Agent, request } from "undici";
import { ErrorCode, invalidArgument, KubemootError } from "../../errors/index.js";
import {
  authorizationHeader,
  checkCredential,
  resolveCredential,
  type SecretReader,
  type WebhookCredential,
} from "./credential.js";

export const MAX_SNAPSHOT_BYTES = 1024 * 1024;

export interface WebhookFetchOptions {
  /** Must be `https:`; user info in the URL is refused (the credential comes from a Secret). */
  url: string;
  /** Deadline for connect, headers and body together, in ms. */
  timeoutMs: number;
  /** PEM certificates that replace the system trust store for this server when given. */
  caBundle?: string | undefined;
  credential: WebhookCredential;
  readSecret: SecretReader;
  /** Body cap in bytes (default 1 MiB, the spec's limit). */
  maxBytes?: number;
  /** Cancels the request (e.g. the poller stopping). */
  signal?: AbortSignal | undefined;
  /** Field path for errors, e.g. `TopologySource racks: spec.webhook`. */
  field?: string;
}

export interface WebhookSnapshotBody {
  text: string;
  status: number;
  bytes: number;
  contentType: string | undefined;
}

const TIMEOUTS = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
]);
const TLS_TRUST = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** Checks a webhook URL without any I/O: https, a host, no user info. */
export function checkWebhookUrl(url: unknown, field: string): URL {
  if (typeof url !== "string" || url === "") throw invalidArgument(field, "required");
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalidArgument(field, "not a valid URL");
  }
  if (u.protocol !== "https:") {
    throw invalidArgument(field, `must use https, got ${u.protocol.replace(/:$/, "")}`);
  }
  if (u.username !== "" || u.password !== "") {
    throw invalidArgument(field, "must not carry user info; reference a credential Secret instead");
  }
  return u;
}

/** The URL as it may appear in messages: no query (it could hold a token), no fragment. */
export function redactedUrl(u: URL): string {
  return `${u.origin}${u.pathname}`;
}

/** GETs the snapshot document; throws KubemootError (see the codes below) on any failure. */
export async function fetchWebhookSnapshot(o: WebhookFetchOptions): Promise<WebhookSnapshotBody> {
  const field = o.field ?? "webhook";
  const url = checkWebhookUrl(o.url, `${field}.url`);
  if (!Number.isSafeInteger(o.timeoutMs) || o.timeoutMs <= 0) {
    throw invalidArgument(`${field}.timeout`, `expected a positive number of ms, got ${o.timeoutMs}`);
  }
  const maxBytes = o.maxBytes ?? MAX_SNAPSHOT_BYTES;
  const credential = await resolveCredential(
    checkCredential(o.credential, `${field}.credential`),
    o.readSecret,
    `${field}.credential`,
  );
  const shown = redactedUrl(url);
  const deadline = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([deadline, o.signal]) : deadline;
  const agent = new Agent({
    connect: {
      timeout: o.timeoutMs,
      ...(o.caBundle ? { ca: o.caBundle } : {}),
      ...(credential.kind === "clientCertificate" ? { cert: credential.cert, key: credential.key } : {}),
    },
    // One request per Agent: nothing to keep alive.
    pipelining: 0,
  });
  const headers: Record<string, string> = {
    accept: "application/json, application/yaml;q=0.9, */*;q=0.1",
  };
  const authorization = authorizationHeader(credential);
  if (authorization !== undefined) headers.authorization = authorization;
  try {
    const res = await request(url, {
      method: "GET",
      headers,
      dispatcher: agent,
      signal,
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
    });
    // Destroying an unread body makes undici emit an abort error; ours to ignore, since
    // every early destroy below is followed by a thrown failure that says why.
    res.body.on("error", () => undefined);
    const contentType = headerText(res.headers["content-type"]);
    if (res.statusCode < 200 || res.statusCode > 299) {
      res.body.destroy();
      const what =
        res.statusCode >= 300 && res.statusCode < 400
          ? `answered ${res.statusCode} (a redirect); redirects are not followed`
          : `answered HTTP ${res.statusCode}`;
      throw failure(`webhook ${shown} ${what}`, field);
    }
    const declared = Number(headerText(res.headers["content-length"]) ?? Number.NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      res.body.destroy();
      throw failure(`webhook ${shown} body of ${declared} bytes is over the ${maxBytes}-byte limit`, field);
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of res.body) {
      const b = chunk as Buffer;
      bytes += b.length;
      if (bytes > maxBytes) {
        res.body.destroy();
        throw failure(`webhook ${shown} body is over the ${maxBytes}-byte limit; stopped reading`, field);
      }
      chunks.push(b);
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
    } catch {
      throw failure(`webhook ${shown} body is not UTF-8 text`, field);
    }
    return { text, status: res.statusCode, bytes, contentType };
  } catch (err) {
    if (KubemootError.is(err)) throw err;
    throw mapError(err, { shown, field, timeoutMs: o.timeoutMs, deadline, caller: o.signal });
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

function headerText(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function failure(message: string, field: string, cause?: unknown): KubemootError {
  return new KubemootError(ErrorCode.SourceUnavailable, message, { field, cause });
}

function mapError(
  err: unknown,
  c: {
    shown: string;
    field: string;
    timeoutMs: number;
    deadline: AbortSignal;
    caller?: AbortSignal | undefined;
  },
): KubemootError {
  const code = errCode(err);
  const name = (err as { name?: string } | null)?.name;
  if (c.caller?.aborted && !c.deadline.aborted) {
    return new KubemootError(ErrorCode.ShuttingDown, `webhook ${c.shown}: request cancelled`, {
      field: c.field,
      cause: err,
    });
  }
  if (c.deadline.aborted || name === "TimeoutError" || (code !== undefined && TIMEOUTS.has(code))) {
    return new KubemootError(
      ErrorCode.Timeout,
      `webhook ${c.shown}: no complete answer within ${c.timeoutMs} ms`,
      {
        field: c.field,
        cause: err,
      },
    );
  }
  if (code !== undefined && TLS_TRUST.has(code)) {
    return failure(`webhook ${c.shown}: server certificate not trusted (${code})`, c.field, err);
  }
  const detail = code ?? (err instanceof Error ? err.message : String(err));
  return failure(`webhook ${c.shown}: request failed (${detail})`, c.field, err);
}

function errCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
