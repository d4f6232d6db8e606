// The sidecar process's local proxy: an Ollama client pointed at it gets placed, streamed,
// attributed answers, and the model lists aggregated from provider state.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { memorySidecarArgs, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

let emulator: EmulatorHandle;
let sidecar: SidecarProcess;

beforeAll(async () => {
  emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { "qwen3:8b": 4863, "qwen3:14b": 9000 },
    contextLength: 8192,
    timeScale: 0.01,
  });
  sidecar = await startSidecarProcess(
    memorySidecarArgs("--provider", `gpu=${emulator.url},vram=24563,context=8192`),
    {
      KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:8b","score":50},{"model":"qwen3:14b","score":45}]',
    },
  );
});

afterAll(async () => {
  expect(await sidecar?.stop()).toBe(0);
  await emulator?.close();
});

it("serves placed, streamed, attributed /api/chat and aggregated /api/tags", async () => {
  expect(sidecar.proxyAddress).toMatch(/^127\.0\.0\.1:\d+$/);
  const base = `http://${sidecar.proxyAddress}`;
  const res = await fetch(`${base}/api/chat`, {
    method: "POST",
    body: JSON.stringify({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "hello there" }],
      options: { num_predict: 5 },
    }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-kubemoot-provider")).toBe("gpu");
  expect(res.headers.get("x-kubemoot-model")).toBe("qwen3:8b");
  const lines = (await res.text())
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { done: boolean; eval_count?: number });
  expect(lines.at(-1)!.done).toBe(true);
  expect(lines.at(-1)!.eval_count).toBe(5);
  const tags = (await (await fetch(`${base}/api/tags`)).json()) as { models: { name: string }[] };
  expect(tags.models.map((m) => m.name).sort()).toEqual(["qwen3:14b", "qwen3:8b"]);
  // The ticket was released: nothing active on the sidecar.
  const metrics = await (await fetch(`${sidecar.apiUrl}/metrics`)).text();
  expect(metrics).toMatch(/^kubemoot_tickets_active 0$/m);
  expect(metrics).toMatch(/^kubemoot_proxy_calls_total\{.*status="200".*\} 1$/m);
});
