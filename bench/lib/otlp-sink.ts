// A stand-in for an OpenTelemetry collector in the tracing benchmarks (docs/benchmarks.md): an
// HTTP server on loopback that reads each OTLP export and answers 200 without decoding it, so a
// traced process pays its whole export path (serialising, sending) and the sink costs as little
// as a collector's receive. It counts what arrived, to show the spans really went out.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface OtlpSink {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (exports go to `<url>/v1/traces`). */
  url: string;
  /** Export requests and their body bytes received so far. */
  stats(): { exports: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on("data", (c: Buffer) => {
      bytes += c.length;
    });
    req.on("end", () => {
      if (req.url === "/v1/traces") exports++;
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ exports, bytes }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
