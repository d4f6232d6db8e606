// A local OTLP/HTTP trace receiver for the tracing tests (docs/tracing.md "Tests"): what a
// collector is to the sidecar, stood in for by this server, which is named for what it is. It
// takes `POST /v1/traces` in OTLP's protobuf encoding and decodes it with the OpenTelemetry proto
// definitions (the generated code @opentelemetry/otlp-transformer ships), keeping every span.

import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { waitUntil } from "./wait-until.js";

const require = createRequire(import.meta.url);

interface Root {
  opentelemetry: {
    proto: {
      collector: {
        trace: {
          v1: {
            ExportTraceServiceRequest: {
              decode(b: Uint8Array): unknown;
              toObject(m: unknown, o: object): Json;
            };
          };
        };
      };
    };
  };
}
// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf, read field by field below
type Json = Record<string, any>;

const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js") as Root;
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export interface ReceivedSpan {
  name: string;
  /** 1 internal, 2 server, 3 client (OTLP's SpanKind numbers). */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  service: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: number;
}

function value(v: Json | undefined): unknown {
  if (v === undefined || v === null) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return v.doubleValue;
  if ("arrayValue" in v) return ((v.arrayValue?.values ?? []) as Json[]).map(value);
  return undefined;
}

function attrs(list: Json[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of list ?? []) out[a.key as string] = value(a.value as Json);
  return out;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests answered 400 (not OTLP protobuf). */
  rejected = 0;
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let self: OtlpReceiver | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/traces") {
          res.writeHead(404).end();
          return;
        }
        try {
          const msg = Request.decode(Buffer.concat(chunks));
          self!.take(Request.toObject(msg, { longs: String, bytes: String }));
          res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
        } catch {
          self!.rejected++;
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const { port } = server.address() as AddressInfo;
    self = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return self;
  }

  private take(req: Json): void {
    const hex = (b64: string | undefined) => (b64 ? Buffer.from(b64, "base64").toString("hex") : "");
    for (const rs of (req.resourceSpans ?? []) as Json[]) {
      const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
      for (const ss of (rs.scopeSpans ?? []) as Json[]) {
        for (const s of (ss.spans ?? []) as Json[]) {
          this.spans.push({
            name: s.name,
            kind: Number(s.kind ?? 0),
            traceId: hex(s.traceId),
            spanId: hex(s.spanId),
            parentSpanId: hex(s.parentSpanId),
            service,
            attributes: attrs(s.attributes),
            events: ((s.events ?? []) as Json[]).map((e) => ({
              name: e.name,
              attributes: attrs(e.attributes),
            })),
            status: Number(s.status?.code ?? 0),
          });
        }
      }
    }
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  /** The spans of one trace, once spans of every name in `names` arrived (10 s at most). */
  async traceWith(traceId: string, names: string[]): Promise<ReceivedSpan[]> {
    await waitUntil(
      () => names.every((n) => this.trace(traceId).some((s) => s.name === n)),
      10_000,
      `spans ${names.join(", ")} of trace ${traceId}`,
    );
    return this.trace(traceId);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** The one span named `name` among `spans`; throws when there are none or several. */
export function oneSpan(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1) throw new Error(`expected one span ${name}, got ${found.length}`);
  return found[0]!;
}

/** `n` random hex digits: a trace (32) or span (16) id for a test's `traceparent`. */
export function randomHex(n: number): string {
  return Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join("");
}
