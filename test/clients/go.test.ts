// The Go client (clients/go): its example is built with Debian's Go toolchain and gRPC
// packages, then run as a real process against a live sidecar (embedded state, probing an
// emulated GPU). A missing `go` fails here with the install step: it is never skipped.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { repoRoot, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

const run = promisify(execFile);
const goDir = path.join(repoRoot, "clients/go");
const workDir = mkdtempSync(path.join(tmpdir(), "kubemoot-go-client-"));
const example = path.join(workDir, "example");
let emulator: EmulatorHandle;
let sidecar: SidecarProcess;
let api: SchedulerClient;
const running = new Set<ChildProcess>();

function assertGoInstalled(): void {
  try {
    execFileSync("go", ["version"], { stdio: "pipe" });
  } catch {
    throw new Error(
      "`go` is not installed: the Go client test needs Debian's Go toolchain and gRPC packages; " +
        "run .ci/go.sh first (it apt-get installs golang-go, golang-google-grpc-dev, " +
        "golang-google-protobuf-dev and golang-github-golang-protobuf-1-5-dev)",
    );
  }
}

beforeAll(async () => {
  assertGoInstalled();
  // A cold build of grpc takes about a minute on two busy cores.
  await run(path.join(goDir, "go-offline.sh"), ["build", "-o", example, "./cmd/example"], {
    timeout: 300_000,
  });
  emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    // qwen3:235b is on disk but fits no card here: the example must print a model-too-large refusal.
    models: { "qwen3:8b": 4863, "big:20b": 16800, "qwen3:235b": 140_000 },
    // One call per loaded copy, so that a held ticket makes the next call wait.
    numParallel: 1,
    timeScale: 0.01,
  });
  sidecar = await startSidecarProcess([
    "--state",
    "memory",
    "--provider",
    `gpu-a=${emulator.url},vram=24563,parallel=1`,
    "--proxy-listen",
    "",
  ]);
  api = schedulerClient(sidecar.apiAddress);
}, 360_000);

afterAll(async () => {
  // An example a failed test left waiting.
  for (const p of running) p.kill("SIGKILL");
  api?.close();
  if (sidecar) expect(await sidecar.stop()).toBe(0);
  await emulator?.close();
  rmSync(workDir, { recursive: true, force: true });
});

/** Runs the example; resolves with its exit code and output (a refusal exits 2). */
function runExample(args: string[], onStdout?: (text: string) => void) {
  const proc = spawn(example, ["-addr", sidecar.apiAddress, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  running.add(proc);
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d) => {
    stdout += d;
    onStdout?.(stdout);
  });
  proc.stderr.on("data", (d) => {
    stderr += d;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    proc.once("close", (code) => {
      running.delete(proc);
      resolve({ code, stdout, stderr });
    }),
  );
}

const placedLine =
  /^placed on gpu-a \((http:\/\/127\.0\.0\.1:\d+)\) model qwen3:8b (warm|cold) ticket (\S+)$/m;

async function metric(name: string): Promise<string> {
  const text = await (await fetch(`${sidecar.apiUrl}/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith(name))
    .join("\n");
}

describe("Go client example against a live sidecar", () => {
  it("places a call, runs it on the emulator, releases the ticket with the outcome", async () => {
    const r = await runExample(["-agent", "team/go-agent", "-model", "qwen3:8b"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const placed = placedLine.exec(r.stdout);
    expect(placed, r.stdout).not.toBeNull();
    expect(placed![1]).toBe(emulator.url);
    expect(r.stdout).toMatch(/^answer: \S+/m);
    expect(r.stdout).toMatch(/^released: true$/m);
    // What the Go client sent at Release, as the sidecar recorded it.
    const att = await api.call("Attribute", { ticketId: placed![3] });
    expect(att.provider).toBe("gpu-a");
    expect(att.model).toBe("qwen3:8b");
    expect(att.success).toBe(true);
    expect(att.releasedAt).not.toBeNull();
    expect(Number(att.promptTokens)).toBeGreaterThan(0);
  });

  // The first test left qwen3:8b warm. With a call holding it, big:20b (preferred) cannot fit
  // beside it and nothing idle can be unloaded, so the example waits for the 8b copy.
  it("waits on the Wait stream while the GPU is busy, and is placed when it frees", async () => {
    const held = await api.call("Place", {
      agent: "team/holder",
      candidates: [{ model: "qwen3:8b", score: 100 }],
      promptChars: 100,
    });
    expect(held.result).toBe("placement");
    expect(held.placement.coldLoad, "qwen3:8b should be warm from the first test").toBe(false);
    let sawWaiting!: () => void;
    const waiting = new Promise<void>((resolve) => {
      sawWaiting = resolve;
    });
    let finished = false;
    const done = runExample(
      ["-agent", "team/go-waiter", "-model", "big:20b,qwen3:8b", "-wait-limit", "60"],
      (out) => {
        if (/^waiting: /m.test(out)) sawWaiting();
      },
    ).finally(() => {
      finished = true;
    });
    try {
      await Promise.race([waiting, done]);
      // The holder keeps the only copy busy: the example must be blocked in Wait, not done.
      if (finished) {
        const early = await done;
        expect.fail(`the example ended before it waited:\n${early.stdout}${early.stderr}`);
      }
    } finally {
      const rel = await api.call("Release", {
        ticketId: held.placement.ticketId,
        outcome: "CALL_OUTCOME_SUCCEEDED",
        latencyMs: 5,
      });
      expect(rel.released).toBe(true);
    }
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^waiting: .+\n(?:.*\n)*placed on gpu-a \(\S+\) model qwen3:8b warm/m);
    expect(r.stdout).toMatch(/^released: true$/m);
  });

  it("prints a refusal and exits 2 when no GPU can ever hold the model", async () => {
    const r = await runExample(["-agent", "team/go-agent", "-model", "qwen3:235b"]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toMatch(/^refused: REASON_MODEL_TOO_LARGE model qwen3:235b: .+$/m);
    expect(r.stdout).not.toContain("placed on");
  });

  it("left no ticket behind", async () => {
    expect(await metric("kubemoot_tickets_active")).toBe("kubemoot_tickets_active 0");
    expect(await metric("kubemoot_release_total")).toContain('outcome="succeeded"} 3');
  });
});
