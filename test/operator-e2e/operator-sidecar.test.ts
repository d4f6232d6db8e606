// The whole path of binding: the operator as a process reads a manifests directory (the
// example crew and prod bundle, pointed at two emulated GPUs), probes the providers and
// publishes their state to a real nats-server, and writes each agent's binding; a sidecar
// started with that agent's env places a call on a candidate from the bound list.
import { type ChildProcess, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { readSetting, SETTINGS } from "../../src/settings/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { schedulerClient } from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { assertBuilt, repoRoot, startSidecarProcess } from "../helpers/sidecar-process.js";

const CATALOG = { "qwen3:32b": 20000, "qwen3:14b": 9000, "qwen3:8b": 4863 };
let nats: NatsServer;
let store: StateStore;
let gpuA: EmulatorHandle;
let gpuB: EmulatorHandle;
let dir: string;
let operator: ChildProcess;
let operatorOut = "";

beforeAll(async () => {
  assertBuilt();
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  gpuA = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 32605,
    models: CATALOG,
    contextLength: 8192,
    timeScale: 0.01,
  });
  gpuB = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: CATALOG,
    contextLength: 8192,
    timeScale: 0.01,
  });
  dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-op-"));
  const manifests = path.join(dir, "manifests");
  for (const f of ["crew/namespace.yaml", "crew/agents.yaml", "crew/policy.yaml", "prod/models.yaml"]) {
    const to = path.join(manifests, f.replace("/", "-"));
    mkdirSync(manifests, { recursive: true });
    copyFileSync(path.join(repoRoot, "examples", f), to);
  }
  const providers = readFileSync(path.join(repoRoot, "examples/prod/providers.yaml"), "utf8")
    .replace("http://ollama-a.kubemoot.svc:11434", gpuA.url)
    .replace("http://ollama-b.kubemoot.svc:11434", gpuB.url);
  writeFileSync(path.join(manifests, "providers.yaml"), providers);
  operator = spawn(
    process.execPath,
    [
      path.join(repoRoot, "bin/kubemoot-scheduler.js"),
      "operator",
      "--manifests",
      manifests,
      "--bindings-dir",
      path.join(dir, "out"),
      "--nats",
      nats.url,
      "--probe-interval-ms",
      "500",
    ],
    { env: { ...process.env, KUBEMOOT_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  operator.stdout!.on("data", (d) => {
    operatorOut += d;
  });
  operator.stderr!.on("data", (d) => {
    operatorOut += d;
  });
});

afterAll(async () => {
  if (operator && operator.exitCode === null) {
    const exited = new Promise<number | null>((r) => operator.once("exit", (c) => r(c)));
    operator.kill("SIGTERM");
    expect(await exited, operatorOut).toBe(0);
  }
  await store?.close();
  await gpuA?.close();
  await gpuB?.close();
  await nats?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function waitFor<T>(
  fn: () => T | undefined | Promise<T | undefined>,
  what: string,
  ms = 20_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${what}\noperator output:\n${operatorOut}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it("binds the crew from files, publishes probed providers, and a sidecar places on a bound candidate", async () => {
  const file = path.join(dir, "out", "bindings", "crew-homelab", "synthesizer.json");
  const binding = await waitFor(
    () =>
      existsSync(file)
        ? (JSON.parse(readFileSync(file, "utf8")) as { env: Record<string, string> })
        : undefined,
    "the synthesizer's binding file",
  );
  const env = binding.env;
  expect(env.KUBEMOOT_MODEL_MODEL).toBe("qwen3:32b");
  // Read as the sidecar reads it.
  const candidates = readSetting(env, SETTINGS.candidatesMulling);
  expect(candidates.map((c) => c.model)).toEqual(["qwen3:32b", "qwen3:14b", "qwen3:8b"]);

  // The operator probed both emulators and published their state.
  const states = await waitFor(async () => {
    const list = await store.providers.list();
    return list.length === 2 && list.every((s) => s.ready && s.totalVramMiB > 0) ? list : undefined;
  }, "both providers published ready");
  expect(states.map((s) => s.name).sort()).toEqual(["ollama-a", "ollama-b"]);
  expect(states.find((s) => s.name === "ollama-a")!.availableModelFootprintsMiB["qwen3:32b"]).toBe(20000);

  const sidecar = await startSidecarProcess(["--nats", nats.url, "--proxy-listen", ""], {
    ...env,
    KUBEMOOT_NAMESPACE: "crew-homelab",
    KUBEMOOT_AGENT_NAME: "synthesizer",
  });
  const client = schedulerClient(sidecar.apiAddress);
  try {
    // No candidates in the request: the sidecar uses the bound list from its env.
    const r = await client.call("Place", { promptChars: 2000 });
    expect(r.result).toBe("placement");
    expect(candidates.map((c) => c.model)).toContain(r.placement.model);
    expect(r.placement.model).toBe("qwen3:32b"); // preferred, and only the 5090 holds it
    expect(r.placement.provider).toBe("ollama-a");
    const rel = await client.call("Release", {
      ticketId: r.placement.ticketId,
      outcome: "CALL_OUTCOME_SUCCEEDED",
      latencyMs: 10,
    });
    expect(rel.released).toBe(true);
  } finally {
    client.close();
    expect(await sidecar.stop()).toBe(0);
  }
});
