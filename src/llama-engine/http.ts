// The engine's HTTP plumbing (docs/rules/engines.md "A real llama.cpp engine"): one request's
// context (its client-gone signal, its bounded JSON body), JSON answers, and server-sent events
// written with backpressure, so a slow reader holds generation instead of filling memory.
import type { IncomingMessage, ServerResponse } from "node:http";
import { invalidArgument } from "../errors/index.js";
import type { GenerationOutput } from "./generation.js";
import type { EngineMetrics } from "./metrics.js";
import type { EngineModel } from "./model-set.js";
import type { Body } from "./request-params.js";

export interface EngineState {
  readonly models: readonly EngineModel[];
  readonly metrics: EngineMetrics;
  readonly startedAtS: number;
  readonly buildInfo: string;
  readonly maxBodyBytes: number;
  nextTaskId(): number;
  observe(g: GenerationOutput): void;
}

export interface EngineRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly state: EngineState;
  /** Aborts when the client goes away before the answer ends. */
  readonly signal: AbortSignal;
  /** The JSON object body (400 when it is not one, 413-sized bodies refused as 400). */
  body(): Promise<Body>;
}

export type Handler = (r: EngineRequest) => Promise<void>;

/** Reads at most `max` bytes; a larger body is refused once it crosses the limit. */
export async function readJsonBody(req: IncomingMessage, max: number): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw invalidArgument("body", `request body too large: the limit is ${max} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalidArgument("body", `invalid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidArgument("body", "must be a JSON object");
  return value as Body;
}

/** An SSE stream: `data: <json>` events; each write waits while the client's buffer is full. */
export class SseStream {
  constructor(private readonly res: ServerResponse) {}

  open(): void {
    this.res.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
    });
    this.res.flushHeaders();
  }

  get opened(): boolean {
    return this.res.headersSent;
  }

  async event(data: unknown): Promise<void> {
    await this.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  }

  end(): void {
    this.res.end();
  }

  private write(text: string): Promise<void> {
    if (this.res.destroyed || this.res.writableEnded) return Promise.resolve();
    if (this.res.write(text)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off("drain", done);
        this.res.off("close", done);
        resolve();
      };
      this.res.on("drain", done);
      this.res.on("close", done);
    });
  }
}
