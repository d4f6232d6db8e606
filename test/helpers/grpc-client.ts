// A gRPC client that is not our server's library: @grpc/grpc-js with a dynamic stub loaded by
// @grpc/proto-loader from the .proto file (plain JS objects, longs as strings, enums as names).
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { repoRoot } from "./sidecar-process.js";

// biome-ignore lint/suspicious/noExplicitAny: dynamic proto-loader stubs are untyped by design.
export type Json = Record<string, any>;

export interface SchedulerClient {
  call(method: string, req: Json): Promise<Json>;
  /** A unary call with request metadata (e.g. `traceparent`). */
  callWithMetadata(method: string, req: Json, metadata: Record<string, string>): Promise<Json>;
  /** Server stream → all messages (resolves at end; rejects on error). */
  stream(method: string, req: Json, onMessage?: (m: Json) => void): { done: Promise<Json[]>; cancel(): void };
  raw: grpc.Client;
  close(): void;
}

const protoDir = path.join(repoRoot, "proto");
const def = protoLoader.loadSync("kubemoot/scheduler/v1/scheduler.proto", {
  includeDirs: [protoDir],
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const pkg = grpc.loadPackageDefinition(def) as Json;

export function schedulerClient(address: string): SchedulerClient {
  const Ctor = pkg.kubemoot.scheduler.v1.SchedulerService as typeof grpc.Client;
  const c = new Ctor(address, grpc.credentials.createInsecure()) as grpc.Client & Json;
  return {
    raw: c,
    call(method, req) {
      return new Promise((resolve, reject) =>
        c[method](req, (err: Error | null, res: Json) => (err ? reject(err) : resolve(res))),
      );
    },
    callWithMetadata(method, req, metadata) {
      const md = new grpc.Metadata();
      for (const [k, v] of Object.entries(metadata)) md.set(k, v);
      return new Promise((resolve, reject) =>
        c[method](req, md, (err: Error | null, res: Json) => (err ? reject(err) : resolve(res))),
      );
    },
    stream(method, req, onMessage) {
      const s = c[method](req) as grpc.ClientReadableStream<Json>;
      const got: Json[] = [];
      const done = new Promise<Json[]>((resolve, reject) => {
        s.on("data", (m: Json) => {
          got.push(m);
          onMessage?.(m);
        });
        s.on("end", () => resolve(got));
        s.on("error", (e) => reject(e));
      });
      return { done, cancel: () => s.cancel() };
    },
    close: () => c.close(),
  };
}

/** Releases a placement's ticket as a call that succeeded in `latencyMs`; returns the answer. */
export function releaseSucceeded(client: SchedulerClient, placement: Json, latencyMs = 1000): Promise<Json> {
  return client.call("Release", {
    ticketId: placement.ticketId,
    outcome: "CALL_OUTCOME_SUCCEEDED",
    latencyMs,
  });
}
