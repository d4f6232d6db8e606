// The runtime env the webhook injects bounds the sidecar's V8 heap (so its RSS stays near what
// it lives on). A bound too tight would abort the process on a burst of large prompts that the
// proxy accepts: four concurrent 7 MiB /api/chat bodies here. With the injected options the
// sidecar must answer all four and keep running (smaller old spaces aborted: see the README's
// Benchmarks section).
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { DEFAULT_INJECTION_OPTIONS } from "../../src/operator/webhook/index.js";
import {
  injectedRuntimeEnv,
  memorySidecarArgs,
  type SidecarProcess,
  startSidecarProcess,
} from "../helpers/sidecar-process.js";

let emulator: EmulatorHandle;
let sidecar: SidecarProcess;

beforeAll(async () => {
  emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 81920,
    models: { "qwen3:8b": 4863 },
    numParallel: 4,
    // A context that admits the prompts: they are held through placement and forwarding.
    contextLength: 4_000_000,
    timeScale: 0.001,
  });
  sidecar = await startSidecarProcess(
    memorySidecarArgs("--provider", `gpu=${emulator.url},vram=81920,parallel=4,context=4000000`),
    {
      KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:8b","score":50}]',
      ...injectedRuntimeEnv(),
    },
  );
});

afterAll(async () => {
  await sidecar?.stop();
  await emulator?.close();
});

it("survives four concurrent 7 MiB prompts under the injected heap bound", async () => {
  expect(DEFAULT_INJECTION_OPTIONS.nodeOptions).toMatch(/--max-old-space-size=\d+/);
  const content = "word ".repeat((7 * 1024 * 1024) / 5);
  const call = async () => {
    const res = await fetch(`http://${sidecar.proxyAddress}/api/chat`, {
      method: "POST",
      body: JSON.stringify({
        model: "qwen3:8b",
        stream: false,
        messages: [{ role: "user", content }],
        options: { num_predict: 2 },
      }),
    });
    return { status: res.status, body: await res.text() };
  };
  const answers = await Promise.all([call(), call(), call(), call()]);
  // Placed and forwarded whole; the emulated card then cannot hold a KV cache that long (502):
  // either way an answer, not a dead sidecar.
  for (const a of answers) {
    expect([200, 502], a.body.slice(0, 200)).toContain(a.status);
    expect(() => JSON.parse(a.body)).not.toThrow();
  }
  expect(sidecar.proc.exitCode).toBeNull();
  expect(sidecar.proc.signalCode).toBeNull();
  const health = await fetch(`${sidecar.apiUrl}/healthz`);
  expect(health.status).toBe(200);
});
