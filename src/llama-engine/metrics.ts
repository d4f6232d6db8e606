// The engine's /metrics in llama-server's names (src/engines/README.md, llama.cpp tools/server
// "Available metrics"), with prom-client, plus prom-client's process metrics: the provider
// publisher reads `process_resident_memory_bytes` as the memory the engine holds (its "VRAM"
// footprint on a CPU, docs/rules/engines.md "A real llama.cpp engine"). n_decode_total counts
// the evaluation steps this engine drives (one per prompt and one per generated token); llama.cpp
// counts its llama_decode calls, and node-llama-cpp may batch several slots' steps into one.
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { GenerationOutput } from "./generation.js";

export interface EngineMetrics {
  observe(g: GenerationOutput): void;
  render(): Promise<{ text: string; contentType: string }>;
}

export function engineMetrics(load: () => { processing: number; deferred: number }): EngineMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  const counter = (name: string, help: string) =>
    new Counter({ name: `llamacpp:${name}`, help, registers: [registry] });
  const promptTokens = counter("prompt_tokens_total", "Number of prompt tokens processed.");
  const promptSeconds = counter("prompt_seconds_total", "Prompt process time");
  const predictedTokens = counter("tokens_predicted_total", "Number of generation tokens processed.");
  const predictedSeconds = counter("tokens_predicted_seconds_total", "Predict process time");
  const decodes = counter("n_decode_total", "Total number of llama_decode() calls");
  let maxTokens = 0;
  // A counter in llama.cpp's exposition, though it holds a high-water mark.
  new Counter({
    name: "llamacpp:n_tokens_max",
    help: "Largest observed n_tokens.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(maxTokens);
    },
  });
  let totals = { promptTokens: 0, promptMs: 0, predictedTokens: 0, predictedMs: 0 };
  const rate = (name: string, help: string, value: () => number) =>
    new Gauge({
      name: `llamacpp:${name}`,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  rate("prompt_tokens_seconds", "Average prompt throughput in tokens/s.", () =>
    totals.promptMs > 0 ? (totals.promptTokens / totals.promptMs) * 1e3 : 0,
  );
  rate("predicted_tokens_seconds", "Average generation throughput in tokens/s.", () =>
    totals.predictedMs > 0 ? (totals.predictedTokens / totals.predictedMs) * 1e3 : 0,
  );
  rate("requests_processing", "Number of requests processing.", () => load().processing);
  rate("requests_deferred", "Number of requests deferred.", () => load().deferred);
  return {
    observe(g) {
      promptTokens.inc(g.promptN);
      promptSeconds.inc(g.promptMs / 1e3);
      predictedTokens.inc(g.predictedN);
      predictedSeconds.inc(g.predictedMs / 1e3);
      decodes.inc(1 + g.predictedN);
      maxTokens = Math.max(maxTokens, g.tokensCached);
      totals = {
        promptTokens: totals.promptTokens + g.promptN,
        promptMs: totals.promptMs + g.promptMs,
        predictedTokens: totals.predictedTokens + g.predictedN,
        predictedMs: totals.predictedMs + g.predictedMs,
      };
    },
    async render() {
      return { text: await registry.metrics(), contentType: registry.contentType };
    },
  };
}
