// The discussion-watch example of clients/typescript (docs/rules/state.md §2.5), run as a real
// process against a real nats-server: the test writes the bucket as the operator's binder does
// (DiscussionBindings.publish) and listens to the discussion events; the example must announce
// its thread, print each binding of its thread as it changes, skip what is not a binding, and
// announce the close when it stops.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bucketSettings,
  connectNatsKv,
  DISCUSSION_BINDINGS_BUCKET,
  type DiscussionBinding,
  DiscussionBindings,
  type DiscussionEvent,
  decodeDiscussionEvent,
  type KvBucket,
  type KvStore,
} from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { repoRoot } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const SCRIPT = path.join(repoRoot, "dist/clients/typescript/discussion-watch.js");
const AGENT = "crew-a/planner";

let server: NatsServer;
let store: KvStore;
let binder: DiscussionBindings;
let raw: KvBucket;
let nc: NatsConnection;
/** Every discussion event received, as the binder would decode it, and why any other was not. */
const events: DiscussionEvent[] = [];
const undecodable: string[] = [];

beforeAll(async () => {
  server = await NatsServer.start();
  store = await connectNatsKv({ servers: server.url });
  binder = await DiscussionBindings.open(store); // creates the bucket, as the operator does
  await binder.ready;
  raw = await store.bucket(DISCUSSION_BINDINGS_BUCKET, bucketSettings()[DISCUSSION_BINDINGS_BUCKET]!);
  nc = await connect({ servers: server.url });
  nc.subscribe("kubemoot.discussion.*.*.*", {
    callback: (_err, msg) => {
      const decoded = decodeDiscussionEvent(msg.subject, msg.data);
      if (decoded.event === undefined) undecodable.push(`${msg.subject}: ${decoded.reason}`);
      else events.push(decoded.event);
    },
  });
  await nc.flush(); // the subscription is in place before any example runs
});

afterAll(async () => {
  await nc?.close();
  binder?.close();
  await store?.close();
  await server?.dispose();
});

/** A running example: its output so far and its exit code once it ends. */
function start(thread: string, ...more: string[]) {
  const proc: ChildProcess = spawn(process.execPath, [SCRIPT, server.url, thread, AGENT, ...more], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const run = { proc, stdout: "", stderr: "", code: undefined as number | null | undefined };
  proc.stdout?.on("data", (d: Buffer) => {
    run.stdout += d.toString();
  });
  proc.stderr?.on("data", (d: Buffer) => {
    run.stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.on("exit", (code) => {
      run.code = code;
      resolve(code);
    }),
  );
  const printed = (what: string, text: string | RegExp, stream: "stdout" | "stderr" = "stdout") =>
    waitUntil(
      () => (typeof text === "string" ? run[stream].includes(text) : text.test(run[stream])),
      30_000,
      `${what} (stdout: ${JSON.stringify(run.stdout)}, stderr: ${JSON.stringify(run.stderr)})`,
    );
  return { run, exited, printed };
}

function binding(thread: string, over: Partial<DiscussionBinding> = {}): DiscussionBinding {
  return {
    v: 1,
    kind: "binding",
    thread,
    phase: "mulling",
    agent: AGENT,
    model: "qwen3:14b",
    provider: "gpu-a",
    endpoint: "http://ollama.gpu-a:11434",
    engine: "ollama",
    score: 80,
    candidates: [
      { model: "qwen3:14b", score: 80 },
      { model: "qwen3:8b", score: 60 },
    ],
    reason: "bound to qwen3:14b on gpu-a",
    revision: 1,
    boundAt: new Date().toISOString(),
    ...over,
  };
}

const eventsOf = (thread: string) => events.filter((e) => e.threadId === thread).map((e) => e.kind);

describe("clients/typescript/discussion-watch", () => {
  it("opens its thread, prints each change of its bindings, skips junk, closes on SIGINT", async () => {
    const thread = "t-watch";
    await binder.publish(binding(thread)); // before the example starts
    await binder.publish(binding("t-other", { reason: "another thread's" }));
    const w = start(thread, "--seconds", "600"); // SIGINT ends it; --seconds only bounds a stray run

    await w.printed("the watch started", `thread ${thread} opened as ${AGENT}`);
    await waitUntil(() => eventsOf(thread).includes("open"), 30_000, "the open event");
    expect(events.find((e) => e.threadId === thread)).toEqual({
      kind: "open",
      threadId: thread,
      agent: AGENT,
    });
    await w.printed(
      "the binding written before it started",
      "mulling r1 binding qwen3:14b on gpu-a (candidates: qwen3:14b, qwen3:8b) — bound to qwen3:14b on gpu-a",
    );

    // The binder's unchanged rewrite (same revision) is no change; a rebind is.
    await binder.publish(binding(thread));
    await binder.publish(
      binding(thread, {
        provider: "gpu-b",
        endpoint: "http://ollama.gpu-b:11434",
        revision: 2,
        reason: "rebound from gpu-a to gpu-b: provider gpu-b is better by 40 points",
      }),
    );
    await w.printed(
      "the rebinding written while it runs",
      "mulling r2 binding qwen3:14b on gpu-b (candidates: qwen3:14b, qwen3:8b) — rebound from gpu-a to gpu-b",
    );

    await binder.publish(
      binding(thread, {
        kind: "unschedulable",
        phase: "triage",
        model: undefined,
        provider: undefined,
        endpoint: undefined,
        engine: undefined,
        score: undefined,
        candidates: [],
        reason: "no model fits: 0/2 providers ready",
        conditions: [{ type: "Scheduled", status: "False", reason: "NoFeasibleModel", message: "none" }],
      }),
    );
    await w.printed("the unschedulable phase", "triage r1 unschedulable: no model fits: 0/2 providers ready");

    // Anyone with write rights can put junk into the bucket: skipped with a warning, not fatal.
    const bytes = (s: string) => new TextEncoder().encode(s);
    await raw.put(`${thread}.triage`, bytes("not json"));
    await raw.put(`${thread}.mulling`, bytes(JSON.stringify({ ...binding(thread), v: 2, revision: 3 })));
    await w.printed("the junk skipped", `skipped ${thread}.triage`, "stderr");
    await w.printed("the foreign version skipped", /skipped t-watch\.mulling .*format version 2/, "stderr");
    await binder.publish(
      binding(thread, { phase: "triage", model: "qwen3:8b", revision: 2, reason: "bound" }),
    );
    await w.printed("a binding after the junk", "triage r2 binding qwen3:8b on gpu-a");
    expect(w.run.code).toBeUndefined(); // still running

    w.run.proc.kill("SIGINT");
    expect(await w.exited).toBe(0);
    await waitUntil(() => eventsOf(thread).includes("close"), 30_000, "the close event");
    expect(eventsOf(thread)).toEqual(["open", "close"]);
    expect(events.filter((e) => e.threadId === thread).every((e) => e.agent === AGENT)).toBe(true);
    expect(undecodable).toEqual([]);

    const lines = w.run.stdout.trim().split("\n");
    expect(lines.filter((l) => l.startsWith("mulling r"))).toHaveLength(2); // the rewrite printed nothing
    expect(w.run.stdout).not.toContain("another thread's");
    expect(lines.at(-1)).toBe(`thread ${thread} closed`);
  });

  it("stops by itself after --seconds, announcing open and close", async () => {
    const thread = "t-brief";
    const w = start(thread, "--seconds", "1");
    expect(await w.exited).toBe(0);
    await waitUntil(() => eventsOf(thread).length === 2, 30_000, "open and close");
    expect(eventsOf(thread)).toEqual(["open", "close"]);
    expect(w.run.stdout).toContain(`thread ${thread} closed`);
  });

  it("refuses arguments that cannot name a thread or an agent", async () => {
    for (const args of [["bad.thread", AGENT], ["t-1", "no-namespace"], ["t-1"]]) {
      const proc = spawn(process.execPath, [SCRIPT, server.url, ...args], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      proc.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const code = await new Promise<number | null>((resolve) => proc.on("exit", resolve));
      expect(code).toBe(2);
      expect(stderr).toContain("usage: discussion-watch");
    }
  });
});
