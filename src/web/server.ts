// The web view's HTTP server (docs/web-view.md): read-only routes over the ViewHub, the page's
// bundled files, a strict Content-Security-Policy on every answer, the optional bearer token,
// and the same connection limits as every other port. Every route takes GET and HEAD alone;
// another method gets 405, an unknown path 404, a malformed query 400, a wrong token 401, each
// as JSON from the one wire table (src/errors/wire.ts).
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ErrorCode, httpAnswer, KubemootError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import {
  http1LimitOptions,
  type ListenerLimits,
  parseHostPort,
  resolveListenerLimits,
} from "../net/index.js";
import { SETTINGS } from "../settings/index.js";
import type { StateStore } from "../state/index.js";
import { webAuth } from "./auth.js";
import { type QueryRules, readQuery } from "./query.js";
import { type Asset, loadAssets } from "./static-assets.js";
import { ViewHub, type ViewHubOptions } from "./view-hub.js";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** The longest request target taken (bytes); a longer one is a malformed query: 400. */
const MAX_TARGET = 2048;
const CALL_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface WebViewOptions {
  /** HOST:PORT; port 0 = any free port. */
  listen: string;
  state: StateStore;
  logger: Logger;
  /** The bearer token; undefined = none asked (keep the listener on 127.0.0.1 then). */
  token?: string;
  /** The trace link template (KUBEMOOT_WEB_TRACE_URL), checked here too; undefined or "" = none. */
  traceUrl?: string;
  limits?: Partial<ListenerLimits>;
  /** Where the built page is (default dist/web). */
  assetsDir?: string;
  hub?: Omit<ViewHubOptions, "state" | "logger">;
}

export interface WebView {
  /** host:port it listens on. */
  readonly address: string;
  /** http://host:port/ */
  readonly url: string;
  readonly hub: ViewHub;
  close(): Promise<void>;
}

const ROUTES: Readonly<Record<string, QueryRules>> = {
  "/api/snapshot": {},
  "/api/events": {},
  "/api/decisions": {
    limit: { kind: "int", min: 1, max: 200 },
    kind: { kind: "choice", values: ["placed", "refused", "released"] },
  },
  "/api/trends": { minutes: { kind: "int", min: 1, max: 60 } },
  "/healthz": {},
};

export async function startWebView(o: WebViewOptions): Promise<WebView> {
  const { host, port } = parseHostPort("--web-listen", o.listen);
  const limits = resolveListenerLimits(o.limits);
  const auth = webAuth(o.token);
  const assets = loadAssets(o.assetsDir);
  if (assets.size === 0)
    o.logger.warn({}, "web view: the page is not built (npm run build); only the API answers");
  const traceUrl = SETTINGS.webTraceUrl.parse(o.traceUrl);
  const hub = new ViewHub({ state: o.state, logger: o.logger, ...o.hub, ...(traceUrl ? { traceUrl } : {}) });
  await hub.start();

  const fail = (res: ServerResponse, err: KubemootError, extra: Record<string, string> = {}) => {
    const a = httpAnswer(err, "ollama");
    const body = JSON.stringify(a.body);
    res.writeHead(a.status, {
      ...SECURITY_HEADERS,
      ...a.headers,
      ...extra,
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(body)),
      "cache-control": "no-store",
    });
    res.end(res.req.method === "HEAD" ? undefined : body);
  };
  const json = (res: ServerResponse, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(text)),
      "cache-control": "no-store",
    });
    res.end(res.req.method === "HEAD" ? undefined : text);
  };
  const file = (res: ServerResponse, a: Asset) => {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": a.type,
      "content-length": String(a.body.length),
      "cache-control": a.cacheControl,
    });
    res.end(res.req.method === "HEAD" ? undefined : a.body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const target = req.url ?? "/";
    if (target.length > MAX_TARGET) {
      return fail(
        res,
        new KubemootError(ErrorCode.InvalidArgument, `request target over ${MAX_TARGET} bytes`),
      );
    }
    const url = new URL(target, "http://view.invalid");
    const path = url.pathname;
    const known = path in ROUTES || assets.has(path) || path === "/" || path.startsWith("/api/calls/");
    if (!known) return fail(res, new KubemootError(ErrorCode.NotFound, `no route ${path.slice(0, 128)}`));
    if (req.method !== "GET" && req.method !== "HEAD") {
      return fail(
        res,
        new KubemootError(ErrorCode.NotFound, `${path.slice(0, 128)} is read-only: GET or HEAD`, {
          reason: "method-not-allowed",
        }),
        { allow: "GET, HEAD" },
      );
    }
    if (path === "/healthz") return json(res, { ok: true });
    const rules = ROUTES[path] ?? {};
    const q = readQuery(url.searchParams, rules);
    if (q.error !== undefined) return fail(res, q.error);
    const verdict = auth.check(req, q.token);
    if (verdict === "missing" || verdict === "bad") {
      return fail(
        res,
        new KubemootError(
          ErrorCode.Unauthenticated,
          verdict === "bad" ? "the web view's token does not match" : "the web view asks for its token",
        ),
        { "www-authenticate": 'Bearer realm="kubemoot"' },
      );
    }
    if (q.token !== undefined && (path === "/" || path === "/index.html")) {
      // Opened once as /?token=…: from now on the cookie carries it, and the URL loses it.
      res.writeHead(303, { ...SECURITY_HEADERS, location: "./", "set-cookie": auth.cookie(q.token) });
      return res.end();
    }
    if (path === "/api/snapshot") return json(res, hub.snapshot());
    if (path === "/api/decisions") {
      const kind = q.values.kind as "placed" | "refused" | "released" | undefined;
      return json(res, { decisions: hub.recentDecisions(Number(q.values.limit ?? 50), kind) });
    }
    if (path === "/api/trends") return json(res, hub.trendSeries(Number(q.values.minutes ?? 60)));
    if (path === "/api/events") {
      if (req.method === "HEAD") return json(res, {});
      if (!hub.attach(res, SECURITY_HEADERS)) {
        return fail(
          res,
          new KubemootError(ErrorCode.Busy, "the web view follows as many browsers as it may"),
          {
            "retry-after": "5",
          },
        );
      }
      return;
    }
    if (path.startsWith("/api/calls/")) {
      const id = decodeURIComponent(path.slice("/api/calls/".length));
      if (!CALL_ID.test(id)) {
        return fail(
          res,
          new KubemootError(ErrorCode.InvalidArgument, "call id: expected [A-Za-z0-9_-]{1,64}", {
            field: "id",
          }),
        );
      }
      const story = hub.call(id);
      if (story === undefined)
        return fail(res, new KubemootError(ErrorCode.NotFound, "no decision recorded for this call here"));
      return json(res, story);
    }
    const asset = assets.get(path);
    if (asset !== undefined) return file(res, asset);
    return fail(
      res,
      new KubemootError(ErrorCode.NotFound, "the web view's page is not built (npm run build)"),
    );
  };

  const server = http.createServer(http1LimitOptions(limits), (req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      o.logger.warn({ err }, "web view: request failed");
      if (!res.headersSent) fail(res, new KubemootError(ErrorCode.InvalidArgument, "malformed request"));
      else res.destroy();
    }
  });
  server.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const shown = a.family === "IPv6" ? `[${a.address}]` : a.address;
  const address = `${shown}:${a.port}`;
  let closing: Promise<void> | undefined;
  return {
    address,
    url: `http://${address}/`,
    hub,
    close() {
      closing ??= (async () => {
        hub.close();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      })();
      return closing;
    },
  };
}
