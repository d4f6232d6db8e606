// Issue 16, item 4: calls do not pile onto a busy single-slot copy while another GPU idles.
// A sidecar process (embedded state, probing two emulated GPUs itself), four concurrent calls
// through its proxy with plain fetch, each a 2 s call, on the real clock (the sidecar measures
// real seconds, and the engine reports its load time). Placement by expected seconds queues a
// call in the sidecar while that is sooner than a load, loads the model on the idle GPU once it
// is not, and never hands a call to a copy whose slots are full (the engine's queue stays empty).
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { memorySidecarArgs, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

const gpus = new Map<string, EmulatorHandle>();
let sidecar: SidecarProcess;
let base: string;
let engineQueued = 0;
let sampler: NodeJS.Timeout | undefined;

beforeAll(async () => {
  for (const name of ["gpu-a", "gpu-b"]) {
    gpus.set(
      name,
      await startEmulator({
        listen: "127.0.0.1:0",
        vramMiB: 24563,
        models: { "qwen3:8b": 4863 },
        contextLength: 8192,
        numParallel: 1,
        // 100 tokens at 50 tokens/s: a 2 s call; a load of 4863 MiB at 4096 MiB/s ≈ 1.2 s.
        outputTokens: 100,
        tokensPerS: 50,
        loadMiBPerS: 4096,
        timeScale: 1,
      }),
    );
  }
  sidecar = await startSidecarProcess(
    memorySidecarArgs(
      ...[...gpus].flatMap(([name, e]) => [
        "--provider",
        `${name}=${e.url},vram=24563,context=8192,parallel=1`,
      ]),
    ),
  );
  base = `http://${sidecar.proxyAddress}`;
  // How many requests ever waited in an engine's own queue behind its one full slot (a request
  // waiting for its copy to finish loading holds that slot; it is not queued behind another).
  sampler = setInterval(() => {
    for (const e of gpus.values()) {
      for (const r of e.gpu().runners) engineQueued = Math.max(engineQueued, r.active + r.waiting - 1);
    }
  }, 5);
});

afterAll(async () => {
  if (sampler) clearInterval(sampler);
  expect(await sidecar?.stop()).toBe(0);
  for (const e of gpus.values()) await e.close();
});

function call(extraHeaders: Record<string, string> = {}) {
  return fetch(`${base}/api/chat`, {
    method: "POST",
    headers: extraHeaders,
    body: JSON.stringify({
      model: "qwen3:8b",
      stream: false,
      messages: [{ role: "user", content: "Summarise the incident." }],
      options: { num_predict: 100 },
    }),
  }).then(async (res) => ({
    status: res.status,
    provider: res.headers.get("x-kubemoot-provider") ?? "",
    coldLoad: res.headers.get("x-kubemoot-cold-load"),
    queueWaitMs: Number(res.headers.get("x-kubemoot-queue-wait-ms") ?? "0"),
    body: await res.text(),
  }));
}

it("spreads four concurrent calls over both GPUs, waits in the sidecar, and reports the wait", async () => {
  // One call first: it loads the model on one GPU, so the sidecar has measured a load and a call.
  const first = await call();
  expect(first.status).toBe(200);
  expect(first.coldLoad).toBe("true");
  const results = await Promise.all([call(), call(), call(), call()]);
  for (const r of results) expect(r.status, r.body).toBe(200);
  const providers = new Set(results.map((r) => r.provider));
  expect(providers).toEqual(new Set(["gpu-a", "gpu-b"]));
  // Two single-slot copies, four calls: at least two waited, in the sidecar, and said so.
  expect(results.filter((r) => r.queueWaitMs > 0).length).toBeGreaterThanOrEqual(2);
  // No call was handed to a copy whose only slot was taken.
  expect(engineQueued).toBe(0);
});

it("a triage call never queues behind others", async () => {
  // Both copies busy with a long call each; a triage call answers at once instead of waiting.
  const busy = [call(), call()];
  await new Promise((r) => setTimeout(r, 50));
  const triage = await call({ "x-kubemoot-phase": "triage" });
  if (triage.status === 200) expect(triage.queueWaitMs).toBe(0);
  else {
    expect(triage.status).toBe(503);
    expect(JSON.parse(triage.body)).toMatchObject({ reason: "gpu-busy", waited_ms: 0 });
  }
  for (const r of await Promise.all(busy)) expect(r.status).toBe(200);
  expect(engineQueued).toBe(0);
});
