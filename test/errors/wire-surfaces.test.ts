// Every error code, and every reason that refines one, walked through both real surfaces: the
// sidecar's API server (gRPC with grpc-js, Connect with fetch) and the proxy's HTTP answer in
// Ollama's and OpenAI's shapes. One real Scheduler behind both throws the error a request names
// (its thread id is `code.reason`), from Place for the API and from acquire for the proxy. Each
// surface must answer what the wire table (src/errors/wire.ts) says, and the proxy's status must
// be the one Connect gives the RPC code, except where the table says why not.
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, startApiServer } from "../../sidecar/api/server.js";
import { ollamaOps } from "../../sidecar/ollama-ops.js";
import { type ProxyServer, startProxy } from "../../sidecar/proxy/server.js";
import { schedulerService } from "../../sidecar/scheduler/service.js";
import { ErrorCode, KubemootError, WIRE, type WireRow } from "../../src/errors/index.js";
import { Scheduler, schedulerConfigFromEnv } from "../../src/scheduler/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";

const FIELD = "probe.field";
const DETAIL = { model: "qwen3:8b", waited_ms: 12 };
const RETRY_AFTER_S = 3;

/** The error a thread id `code.reason` names, with a field, detail and Retry-After to carry. */
function namedError(threadId: string): KubemootError {
  const [code, reason] = threadId.split(".") as [ErrorCode, string];
  return new KubemootError(code, `${threadId} on purpose`, {
    reason: reason as never,
    field: FIELD,
    detail: DETAIL,
    retryAfterS: RETRY_AFTER_S,
  });
}

/** A real scheduler whose placements fail with the error each request names. */
class ThrowingScheduler extends Scheduler {
  override async place(input: { threadId: string }): Promise<never> {
    throw namedError(input.threadId);
  }
  override async acquire(input: { threadId: string }): Promise<never> {
    throw namedError(input.threadId);
  }
}

/** connect's JSON code for a `Code` name: "DeadlineExceeded" → "deadline_exceeded". */
function connectJsonCode(name: string): string {
  return name.replace(/[A-Z]/g, (c, at: number) => (at > 0 ? "_" : "") + c.toLowerCase());
}

const rows: Array<{ code: ErrorCode; reason: string; row: WireRow }> = Object.entries(WIRE).flatMap(
  ([code, reasons]) =>
    Object.entries(reasons as Record<string, WireRow>).map(([reason, row]) => ({
      code: code as ErrorCode,
      reason,
      row,
    })),
);

let state: StateStore;
let ops: ReturnType<typeof ollamaOps>;
let scheduler: Scheduler;
let api: ApiServer;
let proxy: ProxyServer;
let client: SchedulerClient;

beforeAll(async () => {
  state = await openStateStore("memory");
  ops = ollamaOps();
  const config = schedulerConfigFromEnv({ KUBEMOOT_NAMESPACE: "crew", KUBEMOOT_AGENT_NAME: "tooler" });
  scheduler = new ThrowingScheduler({ state, config, ops });
  api = await startApiServer({ host: "127.0.0.1", port: 0, impl: schedulerService(scheduler) });
  proxy = await startProxy({ host: "127.0.0.1", port: 0, scheduler });
  client = schedulerClient(api.address);
});

afterAll(async () => {
  client?.close();
  await proxy?.close(0);
  await api?.close();
  scheduler?.close();
  await ops?.close();
  await state?.close();
});

async function viaConnect(threadId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://${api.address}/kubemoot.scheduler.v1.SchedulerService/Place`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ threadId }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function viaProxy(path: string, threadId: string) {
  const res = await fetch(`http://127.0.0.1:${proxy.port}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-kubemoot-thread": threadId },
    body: JSON.stringify({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe("the wire table on every surface", () => {
  it("has a row for every error code, and reads as many rows as it has", () => {
    expect(Object.keys(WIRE).sort()).toEqual(Object.values(ErrorCode).sort());
    expect(rows.length).toBeGreaterThan(Object.keys(ErrorCode).length);
    expect(rows.map((r) => r.reason)).toContain("prompt-too-large");
  });

  it.each(rows)(
    "$code, reason $reason, answers the table's row over RPC and HTTP alike",
    async ({ code, reason, row }) => {
      const threadId = `${code}.${reason}`;
      const message = `${threadId} on purpose`;

      // The API server: gRPC's status code and Connect's HTTP status and JSON code.
      await expect(client.call("Place", { threadId })).rejects.toMatchObject({
        code: Code[row.rpc],
        details: message,
      });
      const rpc = await viaConnect(threadId);
      expect(rpc.body).toEqual({ code: connectJsonCode(row.rpc), message });

      // The proxy, Ollama's shape.
      const ollama = await viaProxy("/api/chat", threadId);
      expect(ollama.status).toBe(row.http);
      expect(ollama.body).toEqual({ error: message, reason, field: FIELD, ...DETAIL });
      expect(ollama.headers.get("x-kubemoot-reason")).toBe(reason);
      expect(ollama.headers.get("retry-after")).toBe(String(RETRY_AFTER_S));

      // The proxy, OpenAI's shape.
      const openai = await viaProxy("/v1/chat/completions", threadId);
      expect(openai.status).toBe(row.openai.status ?? row.http);
      expect(openai.body).toEqual({
        error: {
          message,
          type: row.openai.type,
          param: FIELD,
          code: row.openai.code,
          reason,
          field: FIELD,
          ...DETAIL,
        },
      });
      expect(openai.headers.get("x-kubemoot-reason")).toBe(reason);

      // The two surfaces agree: the proxy answers Connect's status for the RPC code, or the row
      // says why HTTP has a more exact one (and then it does differ).
      if (row.httpBecause === undefined) expect(ollama.status).toBe(rpc.status);
      else expect(ollama.status).not.toBe(rpc.status);
    },
  );
});
