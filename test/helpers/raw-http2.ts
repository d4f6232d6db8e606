// Node's own HTTP/2 client, for what well-behaved RPC stubs never send (a wrong content-type, a
// cut message, garbage bytes) and for protocols without a Node stub here (Connect and gRPC-Web
// over HTTP/2). One session per request.
import http2 from "node:http2";

export interface RawResponse {
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
}

export function h2Request(
  address: string,
  headers: http2.OutgoingHttpHeaders,
  body?: Uint8Array,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.on("error", reject);
    const req = session.request({ ":method": "POST", ...headers });
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on("response", (h) => {
      head = h;
    });
    req.on("trailers", (t) => {
      trailers = t;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      session.close();
      resolve({ headers: head, trailers, body: Buffer.concat(chunks) });
    });
    req.on("error", reject);
    // Node's client ends a GET's stream by itself.
    if (headers[":method"] !== "GET") req.end(body);
  });
}

/** One length-prefixed message as gRPC and gRPC-Web frame it (flag 1: compressed; 0x80: trailers). */
export function frame(message: Uint8Array, flag = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flag;
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** A gRPC call's status: trailers-only answers carry it in the headers. */
export function grpcStatus(r: RawResponse): { code: number; message: string } {
  const at = r.trailers["grpc-status"] !== undefined ? r.trailers : r.headers;
  return {
    code: Number(at["grpc-status"]),
    message: decodeURIComponent(String(at["grpc-message"] ?? "")),
  };
}

/** A gRPC-Web answer's status, from the trailer frame at the end of its body. */
export function grpcWebStatus(r: RawResponse): { code: number; message: string } {
  let at = 0;
  while (at + 5 <= r.body.length) {
    const flag = r.body[at]!;
    const length = r.body.readUInt32BE(at + 1);
    if (flag & 0x80) {
      const fields = new Map<string, string>();
      for (const line of r.body
        .subarray(at + 5, at + 5 + length)
        .toString("utf8")
        .split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      return {
        code: Number(fields.get("grpc-status")),
        message: decodeURIComponent(fields.get("grpc-message") ?? ""),
      };
    }
    at += 5 + length;
  }
  throw new Error("no gRPC-Web trailer frame in the body");
}
