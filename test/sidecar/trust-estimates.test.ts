// Issue 16, items 1, 2 and 7, through a sidecar process: the official Ollama client (npm
// `ollama`) talks to the sidecar's proxy, and a grpc-js client loaded from the .proto calls
// the API; the GPU is the emulator over HTTP.
// - Short chats must not teach a chars-per-token ratio that refuses a prompt that fits.
// - A Release without an outcome is neutral: it never opens the provider's circuit.
// - A model no provider has is refused at once as REASON_MODEL_UNKNOWN, naming it.
import { Ollama } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { memorySidecarArgs, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

let emulator: EmulatorHandle;
let sidecar: SidecarProcess;
let api: SchedulerClient;
let ollama: Ollama;

beforeAll(async () => {
  emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { "qwen3:8b": 4863 },
    contextLength: 8192,
    timeScale: 0.001,
  });
  sidecar = await startSidecarProcess(
    memorySidecarArgs("--provider", `gpu=${emulator.url},vram=24563,context=8192`),
  );
  api = schedulerClient(sidecar.apiAddress);
  ollama = new Ollama({ host: `http://${sidecar.proxyAddress}` });
});

afterAll(async () => {
  api?.close();
  expect(await sidecar?.stop()).toBe(0);
  await emulator?.close();
});

describe("prompt estimates (item 1)", () => {
  it("four short chats do not make a 20,000-character prompt that fits count as too large", async () => {
    for (const content of ["hi", "Count to 3", "hi", "Count to 3"]) {
      const r = await ollama.chat({ model: "qwen3:8b", messages: [{ role: "user", content }] });
      expect(r.done).toBe(true);
    }
    const long = "The quick brown fox jumps over the lazy dog. ".repeat(445).slice(0, 20_000);
    expect(long.length).toBe(20_000);
    const r = await ollama.chat({ model: "qwen3:8b", messages: [{ role: "user", content: long }] });
    // The engine counts it at ceil(20000 / 3.5) + 7 template tokens: it fits num_ctx 8192.
    expect(r.prompt_eval_count).toBe(Math.ceil(20_000 / 3.5) + 7);
    expect(r.prompt_eval_count).toBeLessThan(8192);
  });

  it("a prompt even a generous count cannot fit is still refused before it is sent", async () => {
    const huge = "word ".repeat(60_000); // 300,000 chars: at least ≈57,000 tokens
    await expect(
      ollama.chat({ model: "qwen3:8b", messages: [{ role: "user", content: huge }] }),
    ).rejects.toMatchObject({ status_code: 413 });
  });
});

describe("Release without an outcome (item 2)", () => {
  it("three natural Release({ticket_id}) calls never open the provider's circuit", async () => {
    for (let i = 0; i < 3; i++) {
      const p = await api.call("Place", { candidates: [{ model: "qwen3:8b", score: 50 }], promptChars: 100 });
      expect(p.result).toBe("placement");
      const r = await api.call("Release", { ticketId: p.placement.ticketId });
      expect(r.released).toBe(true);
      const a = await api.call("Attribute", { ticketId: p.placement.ticketId });
      expect(a.outcome).toBe("CALL_OUTCOME_UNSPECIFIED");
      expect(a.success).toBe(false);
    }
    const after = await api.call("Place", {
      candidates: [{ model: "qwen3:8b", score: 50 }],
      promptChars: 100,
    });
    expect(after.result).toBe("placement");
    await api.call("Release", { ticketId: after.placement.ticketId, outcome: "CALL_OUTCOME_SUCCEEDED" });
  });

  it("three failed calls still open it (the control case), and the answer says unavailable, not busy", async () => {
    for (let i = 0; i < 3; i++) {
      const p = await api.call("Place", { candidates: [{ model: "qwen3:8b", score: 50 }], promptChars: 100 });
      expect(p.result).toBe("placement");
      await api.call("Release", {
        ticketId: p.placement.ticketId,
        outcome: "CALL_OUTCOME_FAILED",
        error: "boom",
      });
    }
    const open = await api.call("Place", {
      candidates: [{ model: "qwen3:8b", score: 50 }],
      promptChars: 100,
    });
    expect(open.result).toBe("refusal");
    expect(open.refusal.reason).toBe("REASON_PROVIDER_UNAVAILABLE");
  });
});

describe("unknown models (item 7)", () => {
  it("answers REASON_MODEL_UNKNOWN at once, naming the model, sized from its name or not", async () => {
    for (const model of ["nosuch:1b", "mystery-model", "bad\u0007name:2b"]) {
      const started = Date.now();
      const r = await api.call("Place", { candidates: [{ model, score: 50 }] });
      expect(r.result).toBe("refusal");
      expect(r.refusal.reason).toBe("REASON_MODEL_UNKNOWN");
      expect(r.refusal.model).toBe(model);
      expect(r.refusal.message).toContain(model.replace("\u0007", "?"));
      expect(r.refusal.message).not.toContain("\u0007");
      // Wait, too, stands aside at once instead of burning its limit.
      const events = await api.stream("Wait", { candidates: [{ model, score: 50 }] }).done;
      expect(events.at(-1)?.standAside?.reason).toBe("REASON_MODEL_UNKNOWN");
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    // Through the proxy it stays a 404.
    await expect(
      ollama.chat({ model: "nosuch:1b", messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toMatchObject({ status_code: 404 });
  });
});
