// The injection webhook's HTTPS server (node:https): POST /mutate-pods takes an AdmissionReview
// v1 and answers one; GET /healthz is for the operator's probes.
//
// TLS: the API server only calls webhooks over HTTPS. With `certDir` the certificate is read
// from `tls.crt` / `tls.key` (a mounted Secret, cert-manager's or the chart's) and re-read
// periodically, so a renewed certificate is served without a restart.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import path from "node:path";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import { type BindingLookup, reviewAdmission } from "./admission.js";
import { type InjectionOptions, parseInjectionOptions } from "./options.js";

export const MUTATE_PATH = "/mutate-pods";
const MAX_BODY_BYTES = 4 << 20;

export interface WebhookTls {
  cert: string | Buffer;
  key: string | Buffer;
}

export interface InjectionWebhookOptions {
  /** 0 picks a free port. */
  port: number;
  /** Default 0.0.0.0 (the API server calls it through a Service). */
  host?: string;
  /** PEM certificate and key; or `certDir`. */
  tls?: WebhookTls;
  /** A directory with tls.crt and tls.key (re-read every `certReloadMs`). */
  certDir?: string;
  /** Default 60 s. */
  certReloadMs?: number;
  lookup: BindingLookup;
  injection: InjectionOptions;
  logger?: Logger;
}

export interface InjectionWebhook {
  readonly port: number;
  /** `https://host:port` */
  readonly url: string;
  /** Counters since start. */
  readonly stats: { reviews: number; injected: number; skipped: number; errors: number };
  close(): Promise<void>;
}

/** tls.crt and tls.key from a directory (the layout of a kubernetes.io/tls Secret). */
export function readCertDir(dir: string): WebhookTls {
  return { cert: readFileSync(path.join(dir, "tls.crt")), key: readFileSync(path.join(dir, "tls.key")) };
}

/** The sidecar settings the chart writes (KUBEMOOT_WEBHOOK_CONFIG), parsed and checked. */
export function loadInjectionOptions(file: string): InjectionOptions {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `${file}: cannot read the webhook config: ${err instanceof Error ? err.message : String(err)}`,
      { field: file },
    );
  }
  return parseInjectionOptions(raw, file);
}

function send(res: import("node:http").ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export async function startInjectionWebhook(o: InjectionWebhookOptions): Promise<InjectionWebhook> {
  const log = o.logger ?? silentLogger;
  let tls = o.tls ?? (o.certDir !== undefined ? readCertDir(o.certDir) : undefined);
  if (!tls) throw new KubemootError(ErrorCode.InvalidConfig, "webhook: give tls or certDir");
  const stats = { reviews: 0, injected: 0, skipped: 0, errors: 0 };

  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const url = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && url === "/healthz") return send(res, 200, { status: "ok" });
    if (url !== MUTATE_PATH) return send(res, 404, { error: `no route ${req.method} ${url}` });
    if (req.method !== "POST") return send(res, 405, { error: "POST an AdmissionReview" });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        send(res, 413, { error: "body too large" });
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (res.headersSent) return;
      stats.reviews += 1;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        stats.errors += 1;
        return send(res, 400, { error: "body is not JSON" });
      }
      try {
        const out = reviewAdmission(body, o.lookup, o.injection);
        if (out.result?.injected) stats.injected += 1;
        else stats.skipped += 1;
        if (out.result) {
          log.info(
            {
              namespace: out.namespace,
              pod: out.pod,
              injected: out.result.injected,
              reasons: out.result.reasons,
            },
            "pod admission reviewed",
          );
        }
        send(res, 200, out.review);
      } catch (err) {
        stats.errors += 1;
        const message = err instanceof Error ? err.message : String(err);
        if (KubemootError.is(err)) return send(res, 400, { error: message });
        log.error({ err: message }, "webhook: internal error");
        send(res, 500, { error: "internal error" });
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host ?? "0.0.0.0", () => {
      server.off("error", reject);
      resolve();
    });
  });

  let timer: NodeJS.Timeout | undefined;
  if (o.certDir !== undefined) {
    const dir = o.certDir;
    timer = setInterval(() => {
      try {
        const next = readCertDir(dir);
        if (next.cert.toString() === tls!.cert.toString() && next.key.toString() === tls!.key.toString())
          return;
        server.setSecureContext({ cert: next.cert, key: next.key });
        tls = next;
        log.info({ certDir: dir }, "webhook certificate reloaded");
      } catch (err) {
        log.warn(
          { certDir: dir, err: err instanceof Error ? err.message : String(err) },
          "webhook: cannot reload certificate",
        );
      }
    }, o.certReloadMs ?? 60_000);
    timer.unref();
  }

  const address = server.address();
  const port = typeof address === "object" && address ? address.port : o.port;
  const host = o.host ?? "0.0.0.0";
  return {
    port,
    url: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        if (timer) clearInterval(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
