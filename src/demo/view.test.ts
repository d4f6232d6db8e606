// The view's pure rendering of a card: its engine beside its label, and for a fixed-model card
// (vLLM) its running and waiting requests and KV-cache use instead of Ollama's load state.
import { describe, expect, it } from "vitest";
import type { EmulatorState } from "../emulator/index.js";
import { type CardView, emptyTotals, renderScreen, type Screen, statusLine } from "./view.js";

function state(o: Partial<EmulatorState>): EmulatorState {
  return {
    now: "2026-01-01T00:00:00Z",
    emulatedMs: 0,
    timeScale: 1,
    vramMiB: 46068,
    usedMiB: 0,
    freeMiB: 46068,
    numParallel: 1,
    contextLength: 8192,
    models: [],
    pending: [],
    activeCount: 0,
    queueDepth: 0,
    faults: [],
    ...o,
  };
}

const model = (name: string, footprintMiB: number, active: number, waiting: number) => ({
  name,
  state: "ready" as const,
  numCtx: 8192,
  footprintMiB,
  weightsMiB: 9000,
  kvMiB: footprintMiB - 9000,
  active,
  waiting,
  keepAlive: "5m0s",
  expiresAt: null,
});

const ollama: CardView = {
  provider: "ollama-a",
  label: "RTX 5090",
  engine: "ollama",
  state: state({
    vramMiB: 32605,
    usedMiB: 10240,
    freeMiB: 22365,
    models: [model("qwen3:14b", 10240, 1, 2)],
    activeCount: 1,
    queueDepth: 2,
  }),
};

const vllm: CardView = {
  provider: "vllm-b",
  label: "L40S",
  engine: "vllm",
  kvCacheUsage: 0.1234,
  state: state({
    usedMiB: 41461,
    freeMiB: 4607,
    numParallel: 2,
    models: [model("qwen3:14b", 41461, 2, 3)],
    activeCount: 2,
    queueDepth: 3,
  }),
};

function screen(cards: CardView[]): Screen {
  return { elapsedS: 0, speed: 10, seed: 1, cards, recent: [], totals: emptyTotals() };
}

describe("demo view", () => {
  it("names each card's engine next to its label", () => {
    const out = renderScreen(screen([ollama, vllm]), new Map());
    expect(out).toMatch(/^ollama-a\s+RTX 5090 \(ollama\)\s+\[/m);
    expect(out).toMatch(/^vllm-b\s+L40S \(vllm\)\s+\[/m);
  });

  it("shows a fixed-model card's running and waiting requests and KV cache, Ollama's slots otherwise", () => {
    const out = renderScreen(screen([ollama, vllm]), new Map());
    expect(out).toMatch(/qwen3:14b\s+10\.0 GiB ready\s+slots 1\/1 {2}waiting 2/);
    expect(out).toMatch(/qwen3:14b\s+40\.5 GiB always warm {2}running 2\/2 {2}waiting 3 {2}KV cache 12\.3%/);
    expect(statusLine(screen([ollama, vllm]))).toBe(
      "[0s] ollama-a: qwen3:14b(ready,1/1) 10.0/31.8 GiB q2 | vllm-b: qwen3:14b(run 2, wait 3, kv 12.3%) 40.5/45.0 GiB q3",
    );
  });

  it("leaves the KV cache out when it is unknown", () => {
    const { kvCacheUsage: _, ...unknown } = vllm;
    expect(renderScreen(screen([unknown]), new Map())).not.toMatch(/KV cache/);
    expect(statusLine(screen([unknown]))).toContain("vllm-b: qwen3:14b(run 2, wait 3) ");
  });
});
