// The API port's plain HTTP routes, beside the RPCs: Prometheus metrics, liveness and
// readiness for probes that speak HTTP rather than gRPC.
export interface PlainRoutesOptions {
  /** Prometheus text for GET /metrics (no route without it). */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** Readiness: serving, or why not. */
  readiness: () => Readiness;
}

export type Readiness = "serving" | "draining" | "state-unavailable";

/** What these routes use of Node's HTTP/1.1 and HTTP/2 compatibility request and response. */
interface Request {
  readonly url?: string;
  readonly method?: string;
}
interface Response {
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

/** GET /healthz (liveness), /readyz (readiness), /metrics; a JSON 404 for anything else. */
export function plainRoutes(opts: PlainRoutesOptions): (req: Request, res: Response) => void {
  return (req, res) => {
    const url = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && url === "/healthz") return json(res, 200, { status: "ok" });
    if (req.method === "GET" && url === "/readyz") {
      const status = opts.readiness();
      return json(res, status === "serving" ? 200 : 503, { status });
    }
    if (req.method === "GET" && url === "/metrics" && opts.metrics) {
      opts.metrics().then(
        (m) => {
          res.writeHead(200, { "content-type": m.contentType });
          res.end(m.body);
        },
        (err) => json(res, 500, { error: String(err) }),
      );
      return;
    }
    json(res, 404, { error: `no route for ${req.method} ${url}` });
  };
}

function json(res: Response, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
