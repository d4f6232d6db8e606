// The simulation's Ollama agrees with the emulator: one small script of requests is run twice —
// against the real emulator over HTTP (scaled wall time) and against the simulation's Ollama in
// virtual time — and the two must agree on load times, slot queueing and eviction: the same
// completion order, the same load/unload sequence, proportional timings and the same models
// resident at the end.
import { afterEach, describe, expect, it } from "vitest";
import { chatPromptTokens, type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { EventLoop, SimOllama } from "../../src/sim/index.js";
import { postJson } from "../helpers/emulator-http.js";

const SCALE = 0.2; // 1 emulated second = 200 wall ms
const MODELS = {
  "a:1b": { onDiskMiB: 1024, kvMiBPerToken: 0.125 },
  "b:2b": { onDiskMiB: 2048, kvMiBPerToken: 0.125 },
  "c:3b": { onDiskMiB: 3072, kvMiBPerToken: 0.125 },
};
// 1536 + 2560 fit in 6500 MiB; adding c (3584) does not, and a + c + b never fit together.
const GPU = { vramMiB: 6500, numParallel: 1, contextLength: 4096, tokensPerS: 10 };
const OUTPUT_TOKENS = 10; // one emulated second of generation each
const MESSAGES = [{ role: "user", content: "hello" }];

/** Emulated ms at which each request arrives. */
const SCRIPT = [
  { id: "r1", at: 0, model: "a:1b" }, // loads a (1 s), runs 1 s
  { id: "r2", at: 200, model: "a:1b" }, // joins a, waits for its only slot
  { id: "r3", at: 400, model: "b:2b" }, // loads b beside a (2 s)
  { id: "r4", at: 4000, model: "c:3b" }, // no room: Ollama evicts idle a (shortest keep_alive left)
  { id: "r5", at: 4500, model: "a:1b" }, // behind c in order; a must come back: b is evicted
];

interface Outcome {
  id: string;
  doneAt: number;
  loadMs: number;
  totalMs: number;
}

const open: EmulatorHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});

function simulated(): { outcomes: Outcome[]; events: string[]; resident: string[] } {
  const loop = new EventLoop();
  const events: string[] = [];
  const gpu = new SimOllama(
    loop,
    {
      name: "gpu",
      ...GPU,
      models: Object.entries(MODELS).map(([name, m]) => ({ name, ...m })),
    },
    {
      onLoadStart: (_g, model) => events.push(`load ${model}`),
      onUnload: (_g, model) => events.push(`unload ${model}`),
    },
  );
  const outcomes: Outcome[] = [];
  const promptTokens = chatPromptTokens(MESSAGES);
  for (const s of SCRIPT) {
    loop.at(s.at, () => {
      gpu.submit(
        { model: s.model, kind: "infer", promptTokens, outputTokens: OUTPUT_TOKENS },
        {
          onDone: (r) => outcomes.push({ id: s.id, doneAt: loop.now, loadMs: r.loadMs, totalMs: r.totalMs }),
          onError: (m) => {
            throw new Error(`${s.id}: ${m}`);
          },
        },
      );
    });
  }
  // Until the last answer (not on to the keep_alive expiries five minutes later).
  while (outcomes.length < SCRIPT.length && loop.pending > 0) loop.run(loop.now + 50);
  return {
    outcomes,
    events,
    resident: gpu
      .ps()
      .map((r) => r.model)
      .sort(),
  };
}

async function emulated(): Promise<{ outcomes: Outcome[]; events: string[]; resident: string[] }> {
  const emu = await startEmulator({ listen: "127.0.0.1:0", models: MODELS, ...GPU, timeScale: SCALE });
  open.push(emu);
  const events: string[] = [];
  const seen = new Map<string, string>();
  let polling = true;
  // Watch the runners' states from the emulator's own model (no HTTP in the way of timing).
  const poll = (async () => {
    while (polling) {
      const now = new Map(emu.gpu().runners.map((r) => [r.model, r.state]));
      for (const [model, state] of now) {
        const before = seen.get(model);
        if ((before === undefined || before === "unloading") && state === "loading")
          events.push(`load ${model}`);
        if (before !== undefined && before !== "unloading" && state === "unloading")
          events.push(`unload ${model}`);
      }
      for (const model of [...seen.keys()]) if (!now.has(model)) seen.delete(model);
      for (const [model, state] of now) seen.set(model, state);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  // Warm the HTTP client first: its first request pays for loading and connecting, which
  // would otherwise delay the script's first requests by tens of wall ms.
  for (let i = 0; i < 3; i++) await fetch(`${emu.url}/api/version`).then((r) => r.text());
  const t0 = performance.now();
  const outcomes: Outcome[] = [];
  await Promise.all(
    SCRIPT.map(async (s) => {
      await new Promise((r) => setTimeout(r, s.at * SCALE));
      const res = await postJson(`${emu.url}/api/chat`, {
        model: s.model,
        messages: MESSAGES,
        stream: false,
        options: { num_predict: OUTPUT_TOKENS },
      });
      expect(res.status, res.text).toBe(200);
      const body = JSON.parse(res.text) as { load_duration?: number; total_duration: number };
      outcomes.push({
        id: s.id,
        doneAt: (performance.now() - t0) / SCALE,
        loadMs: (body.load_duration ?? 0) / 1e6,
        totalMs: body.total_duration / 1e6,
      });
    }),
  );
  polling = false;
  await poll;
  const ps = (await (await fetch(`${emu.url}/api/ps`)).json()) as { models: Array<{ name: string }> };
  return { outcomes, events, resident: ps.models.map((m) => m.name).sort() };
}

/** Generous: wall-clock scheduling of the scaled emulator adds a few ms of wall time per step. */
function close(real: number, sim: number): boolean {
  return Math.abs(real - sim) <= 0.2 * sim + 400;
}

describe("the simulation's Ollama and the emulator", () => {
  it("agree on load time, slot queueing and eviction for the same script", async () => {
    const sim = simulated();
    const real = await emulated();

    // What the script exercises, in the simulation's own terms.
    expect(sim.outcomes.map((o) => o.id)).toEqual(["r1", "r2", "r3", "r5", "r4"]);
    // At 5 s a's unload ends: c starts loading and, behind it, a's request makes b go.
    expect(sim.events).toEqual([
      "load a:1b",
      "load b:2b",
      "unload a:1b",
      "unload b:2b",
      "load c:3b",
      "load a:1b",
    ]);
    const byId = new Map(sim.outcomes.map((o) => [o.id, o]));
    expect(byId.get("r1")!.loadMs).toBeCloseTo(1000, 0); // 1024 MiB at 1024 MiB/s
    expect(byId.get("r3")!.loadMs).toBeCloseTo(2000, 0);
    expect(byId.get("r2")!.doneAt - byId.get("r1")!.doneAt).toBeGreaterThanOrEqual(1000); // one slot
    expect(byId.get("r4")!.loadMs).toBeCloseTo(1000 + 3000, 0); // unload a (1 s) + load c (3 s)

    // The emulator over HTTP does the same.
    expect(real.outcomes.map((o) => o.id)).toEqual(sim.outcomes.map((o) => o.id));
    expect(real.events).toEqual(sim.events);
    expect(real.resident).toEqual(sim.resident);
    expect(real.resident).toEqual(["a:1b", "c:3b"]);
    const realById = new Map(real.outcomes.map((o) => [o.id, o]));
    for (const s of SCRIPT) {
      const a = realById.get(s.id)!;
      const b = byId.get(s.id)!;
      expect(close(a.loadMs, b.loadMs), `${s.id} load ${a.loadMs} vs ${b.loadMs}`).toBe(true);
      expect(close(a.totalMs, b.totalMs), `${s.id} total ${a.totalMs} vs ${b.totalMs}`).toBe(true);
      expect(close(a.doneAt, b.doneAt), `${s.id} done at ${a.doneAt} vs ${b.doneAt}`).toBe(true);
    }
  });
});
