// Answers to requests node's HTTP parser refuses before any route sees them (a malformed request,
// or one not received within the listener's deadlines, src/net/listener-limits.ts): written on
// the socket as whole HTTP/1.1 responses, in the wire table's Ollama shape.
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ErrorCode, httpAnswer, KubemootError } from "../../src/errors/index.js";

function rawAnswer(err: KubemootError): string {
  const a = httpAnswer(err, "ollama");
  const body = JSON.stringify(a.body);
  const headers = Object.entries(a.headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return (
    `HTTP/1.1 ${a.status} ${STATUS_CODES[a.status] ?? ""}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${headers.join("")}` +
    `connection: close\r\n\r\n${body}`
  );
}

const REQUEST_TIMEOUT = rawAnswer(
  new KubemootError(ErrorCode.Timeout, "request not received in time", { reason: "request-timeout" }),
);
const MALFORMED = rawAnswer(new KubemootError(ErrorCode.InvalidArgument, "malformed HTTP request"));

/** The server's clientError handler. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) socket.destroy();
  else socket.end(err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? REQUEST_TIMEOUT : MALFORMED);
}
