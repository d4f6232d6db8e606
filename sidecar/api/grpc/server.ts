// A lean gRPC server on node:http2: unary, server-streaming and bidi-streaming methods whose
// handlers take and return message bytes. It exists because the sidecar answers every
// inference call twice (Place, Release) and the general-purpose servers cost more per call:
// on this machine a grpc-js client's no-op call took ~0.34 ms against a bare node:http2
// answer, ~0.4–0.65 ms against a grpc-js server and ~0.9 ms against connect-node's gRPC
// (the figures are in the README). Only the identity encoding is offered.
import type http2 from "node:http2";
import { frameMessage, MessageReader } from "./framing.js";
import { encodeGrpcMessage, GrpcCode, GrpcStatusError, parseGrpcTimeout } from "./status.js";

/** What a handler knows about its call. */
export interface GrpcCall {
  /** `/package.Service/Method`. */
  readonly path: string;
  /** The request headers (custom metadata included). */
  readonly headers: http2.IncomingHttpHeaders;
  /** Aborted when the client cancels, the deadline passes or the server shuts down. */
  readonly signal: AbortSignal;
  /** Milliseconds left before the client's deadline, or undefined without one. */
  timeoutMs(): number | undefined;
}

/** Sends one response message; resolves once the stream can take more (back-pressure). */
export type Send = (message: Uint8Array) => Promise<void>;

export type GrpcMethod =
  | { kind: "unary"; handle(request: Buffer, call: GrpcCall): Promise<Uint8Array> | Uint8Array }
  | { kind: "server_streaming"; handle(request: Buffer, call: GrpcCall, send: Send): Promise<void> }
  | {
      kind: "bidi_streaming";
      handle(requests: AsyncIterable<Buffer>, call: GrpcCall, send: Send): Promise<void>;
    };

export interface GrpcHandlerOptions {
  /** Methods by path (`/package.Service/Method`). */
  methods: ReadonlyMap<string, GrpcMethod>;
  /** Largest request message accepted (bytes). */
  maxReceiveBytes: number;
  /** Aborted when the server shuts down: every call's signal follows it. */
  shutdownSignal?: AbortSignal;
  /** Called with every error a handler threw that is not a GrpcStatusError (a bug). */
  onInternalError?: (err: unknown, path: string) => void;
}

/** Every answer's leading headers (spread into a fresh object per call). */
const RESPONSE_HEADERS = {
  ":status": 200,
  "content-type": "application/grpc",
  "grpc-accept-encoding": "identity",
} as const;

const CANCELLED = new GrpcStatusError(GrpcCode.CANCELLED, "the client cancelled the call");
const SHUTDOWN = new GrpcStatusError(GrpcCode.UNAVAILABLE, "the server is shutting down");

/** The `stream` listener of an HTTP/2 server that answers gRPC calls. */
export function grpcStreamHandler(
  options: GrpcHandlerOptions,
): (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void {
  return (stream, headers) => {
    // A peer that resets the stream makes it emit 'error'; the call then simply ends.
    stream.on("error", () => undefined);
    const path = headers[":path"] ?? "";
    if (headers[":method"] !== "POST") {
      respondHttp(stream, 405, "gRPC calls are POST requests");
      return;
    }
    const contentType = headers["content-type"] ?? "";
    if (!/^application\/grpc(\+proto)?(;.*)?$/.test(contentType)) {
      respondHttp(
        stream,
        415,
        `unsupported content-type "${contentType}": this port speaks application/grpc`,
      );
      return;
    }
    const method = options.methods.get(path);
    if (method === undefined) {
      trailersOnly(stream, new GrpcStatusError(GrpcCode.UNIMPLEMENTED, `unknown method ${path}`));
      return;
    }
    const encoding = headers["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") {
      trailersOnly(
        stream,
        new GrpcStatusError(
          GrpcCode.UNIMPLEMENTED,
          `grpc-encoding "${encoding}" is not supported (identity only)`,
        ),
      );
      return;
    }
    let timeoutMs: number | undefined;
    try {
      timeoutMs = parseGrpcTimeout(headers["grpc-timeout"] as string | undefined);
    } catch (err) {
      trailersOnly(stream, err as GrpcStatusError);
      return;
    }
    new Call(stream, path, headers, method, timeoutMs, options).start();
  };
}

/** One call on one stream: reads the request(s), runs the handler, writes the answer once. */
class Call implements GrpcCall {
  private readonly controller = new AbortController();
  private readonly deadlineAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private headersSent = false;
  private finished = false;
  private readonly reader: MessageReader;

  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    readonly path: string,
    readonly headers: http2.IncomingHttpHeaders,
    private readonly method: GrpcMethod,
    timeoutMs: number | undefined,
    private readonly options: GrpcHandlerOptions,
  ) {
    this.reader = new MessageReader(options.maxReceiveBytes);
    this.deadlineAt = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  timeoutMs(): number | undefined {
    return this.deadlineAt === undefined ? undefined : Math.max(0, this.deadlineAt - Date.now());
  }

  start(): void {
    const { stream, options } = this;
    if (this.deadlineAt !== undefined) {
      this.timer = setTimeout(
        () => this.fail(new GrpcStatusError(GrpcCode.DEADLINE_EXCEEDED, "the call's deadline passed")),
        Math.max(0, this.deadlineAt - Date.now()),
      );
    }
    // 'close' before the answer: the client went away (RST_STREAM or a dropped connection).
    stream.once("close", () => {
      if (!this.finished) this.abort(CANCELLED);
    });
    const shutdown = options.shutdownSignal;
    if (shutdown !== undefined && this.method.kind !== "unary") {
      // Long calls end at shutdown; short unary calls are drained instead.
      if (shutdown.aborted) {
        this.fail(SHUTDOWN);
        return;
      }
      const onShutdown = () => this.fail(SHUTDOWN);
      shutdown.addEventListener("abort", onShutdown, { once: true });
      stream.once("close", () => shutdown.removeEventListener("abort", onShutdown));
    }
    if (this.method.kind === "bidi_streaming") this.runBidi(this.method);
    else this.readOne();
  }

  /** Unary and server-streaming: exactly one request message, then end of stream. */
  private readOne(): void {
    const { stream } = this;
    const messages: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => {
      if (this.finished) return;
      try {
        for (const m of this.reader.push(chunk)) messages.push(m);
      } catch (err) {
        this.fail(err);
      }
    });
    stream.once("end", () => {
      if (this.finished) return;
      if (messages.length !== 1 || this.reader.partial) {
        const what = this.reader.partial
          ? "a truncated request message"
          : `${messages.length} request messages`;
        this.fail(
          new GrpcStatusError(GrpcCode.INVALID_ARGUMENT, `expected one request message, got ${what}`),
        );
        return;
      }
      const request = messages[0]!;
      const method = this.method;
      if (method.kind === "unary") {
        Promise.resolve()
          .then(() => method.handle(request, this))
          .then(
            (response) => this.succeed(response),
            (err) => this.fail(err),
          );
      } else if (method.kind === "server_streaming") {
        method.handle(request, this, this.send).then(
          () => this.succeed(),
          (err) => this.fail(err),
        );
      }
    });
  }

  private runBidi(method: Extract<GrpcMethod, { kind: "bidi_streaming" }>): void {
    const { stream, reader } = this;
    async function* requests(): AsyncGenerator<Buffer> {
      for await (const chunk of stream as AsyncIterable<Buffer>) yield* reader.push(chunk);
      if (reader.partial) {
        throw new GrpcStatusError(GrpcCode.INVALID_ARGUMENT, "the stream ended inside a request message");
      }
    }
    method.handle(requests(), this, this.send).then(
      () => this.succeed(),
      (err) => this.fail(err),
    );
  }

  private readonly send: Send = async (message) => {
    if (this.finished) throw this.controller.signal.reason ?? CANCELLED;
    this.sendHeaders();
    if (!this.stream.write(frameMessage(message))) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.stream.off("drain", done);
          this.stream.off("close", done);
          resolve();
        };
        this.stream.on("drain", done);
        this.stream.on("close", done);
      });
    }
  };

  private sendHeaders(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    this.stream.respond({ ...RESPONSE_HEADERS }, { waitForTrailers: true });
    this.stream.once("wantTrailers", () => {
      const status =
        this.outcome === "pending"
          ? new GrpcStatusError(GrpcCode.INTERNAL, "the call ended without a status")
          : this.outcome;
      this.stream.sendTrailers(statusHeaders(status === "ok" ? undefined : status));
    });
  }

  /** The status the trailers carry. */
  private outcome: GrpcStatusError | "ok" | "pending" = "pending";

  /**
   * Ends the call with OK, after a unary call's one message if given. Node writes the trailers
   * on a later turn, once the stream asks for them ('wantTrailers').
   */
  private succeed(message?: Uint8Array): void {
    if (!this.finish() || !this.writable()) return;
    this.outcome = "ok";
    this.sendHeaders();
    if (message === undefined) this.stream.end();
    else this.stream.end(frameMessage(message));
  }

  private fail(err: unknown): void {
    if (!this.finish()) return;
    const status = this.toStatus(err);
    this.abort(status);
    if (!this.writable()) return;
    if (!this.headersSent) {
      trailersOnly(this.stream, status);
      return;
    }
    this.outcome = status;
    this.stream.end();
  }

  /** Marks the call answered; false when it already was. */
  private finish(): boolean {
    if (this.finished) return false;
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    return true;
  }

  private writable(): boolean {
    return !this.stream.destroyed && !this.stream.closed;
  }

  private abort(reason: GrpcStatusError): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  private toStatus(err: unknown): GrpcStatusError {
    if (err instanceof GrpcStatusError) return err;
    this.options.onInternalError?.(err, this.path);
    return new GrpcStatusError(GrpcCode.INTERNAL, err instanceof Error ? err.message : String(err));
  }
}

function statusHeaders(status: GrpcStatusError | undefined): http2.OutgoingHttpHeaders {
  if (status === undefined) return { "grpc-status": "0" };
  return { "grpc-status": String(status.code), "grpc-message": encodeGrpcMessage(status.message) };
}

/** An error before any message: the status travels in the only HEADERS frame. */
function trailersOnly(stream: http2.ServerHttp2Stream, status: GrpcStatusError): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  stream.respond({ ...RESPONSE_HEADERS, ...statusHeaders(status) }, { endStream: true });
  // The request body is not read: close our side cleanly and drop whatever it still sends.
  stream.resume();
}

function respondHttp(stream: http2.ServerHttp2Stream, status: number, message: string): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  stream.respond({ ":status": status, "content-type": "application/json" });
  stream.end(JSON.stringify({ error: message }));
  stream.resume();
}
