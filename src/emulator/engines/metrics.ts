// /metrics of a personality in the engine's own metric names (src/engines/README.md), rendered
// by prom-client from the GPU model at scrape time. --engine-version picks the KV-cache names:
// vLLM "legacy" (before 0.9) has only vllm:gpu_cache_usage_perc, "current" has
// vllm:kv_cache_usage_perc and the deprecated name beside it; llama.cpp "legacy" builds export
// llamacpp:kv_cache_usage_ratio and llamacpp:kv_cache_tokens, current ones no KV-cache gauge.
import { Counter, Gauge, Registry } from "prom-client";
import type { FixedModelGpu } from "./fixed-gpu.js";
import { GPU_MEMORY_UTILIZATION, type Personality } from "./personality.js";

export interface EngineMetrics {
  render(): Promise<{ text: string; contentType: string }>;
}

type Labels = Record<string, string>;

export function engineMetrics(p: Personality, gpu: FixedModelGpu): EngineMetrics {
  const registry = new Registry();
  const labels: Labels =
    p.engine === "vllm"
      ? { model_name: p.spec.name, engine: "0" }
      : p.engine === "sglang"
        ? { model_name: p.spec.name }
        : {};
  const labelNames = Object.keys(labels);
  const gauge = (name: string, help: string, value: () => number, extra: Labels = {}) =>
    new Gauge({
      name,
      help,
      labelNames: [...labelNames, ...Object.keys(extra)],
      registers: [registry],
      collect() {
        this.set({ ...labels, ...extra }, value());
      },
    });
  const counter = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(labels, value());
      },
    });
  const running = () => gpu.runningCount();
  const waiting = () => gpu.waitingCount();
  const usage = () => gpu.kvUsage();
  const prompt = () => gpu.totals().promptTokens;
  const generated = () => gpu.totals().generatedTokens;
  const legacy = p.version === "legacy";
  if (p.engine === "vllm") {
    gauge("vllm:num_requests_running", "Number of requests in model execution batches.", running);
    gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", waiting);
    gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", usage);
    if (!legacy) gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage);
    counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", prompt);
    counter("vllm:generation_tokens_total", "Number of generation tokens processed.", generated);
    const blockSize = 16;
    gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", () => 1, {
      block_size: String(blockSize),
      gpu_memory_utilization: String(GPU_MEMORY_UTILIZATION),
      num_gpu_blocks: String(Math.floor(p.gpu.kvCapacityTokens / blockSize)),
    });
  } else if (p.engine === "llamacpp") {
    // Seconds at the emulated rates; decode calls one per generated token and one per prompt.
    const promptS = () => prompt() / p.gpu.promptTokensPerS;
    const generatedS = () => generated() / p.gpu.tokensPerS;
    counter("llamacpp:prompt_tokens_total", "Number of prompt tokens processed.", prompt);
    counter("llamacpp:prompt_seconds_total", "Prompt process time", promptS);
    counter("llamacpp:tokens_predicted_total", "Number of generation tokens processed.", generated);
    counter("llamacpp:tokens_predicted_seconds_total", "Predict process time", generatedS);
    counter(
      "llamacpp:n_decode_total",
      "Total number of llama_decode() calls",
      () => gpu.totals().requests + generated(),
    );
    counter("llamacpp:n_tokens_max", "Largest observed n_tokens.", () => gpu.totals().maxTokens);
    gauge(
      "llamacpp:prompt_tokens_seconds",
      "Average prompt throughput in tokens/s.",
      () => p.gpu.promptTokensPerS,
    );
    gauge(
      "llamacpp:predicted_tokens_seconds",
      "Average generation throughput in tokens/s.",
      () => p.gpu.tokensPerS,
    );
    gauge("llamacpp:requests_processing", "Number of requests processing.", running);
    gauge("llamacpp:requests_deferred", "Number of requests deferred.", waiting);
    if (legacy) {
      gauge("llamacpp:kv_cache_usage_ratio", "KV-cache usage. 1 means 100 percent usage.", usage);
      gauge("llamacpp:kv_cache_tokens", "KV-cache tokens.", () => gpu.kvUsedTokens());
    }
  } else {
    counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", prompt);
    counter("sglang:generation_tokens_total", "Number of generation tokens processed.", generated);
    gauge("sglang:num_running_reqs", "The number of running requests", running);
    gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue", waiting);
    gauge("sglang:token_usage", "The token usage", usage);
    gauge("sglang:num_used_tokens", "The number of used tokens", () => gpu.kvUsedTokens());
  }
  return {
    async render() {
      return { text: await registry.metrics(), contentType: registry.contentType };
    },
  };
}
