// The shared Prometheus text reader, on literal /metrics texts in each engine's format.
import { describe, expect, it } from "vitest";
import { type EngineMetricNames, engineOfMetrics, fraction, gauge, readLoad } from "./engine-probe.js";
import { LLAMACPP_METRICS } from "./llamacpp-probe.js";
import { meanFirst, readPromLine, readPromSamples, sumFirst } from "./prom-text.js";
import { SGLANG_METRICS } from "./sglang-probe.js";
import { VLLM_METRICS } from "./vllm-probe.js";

// vLLM before the V1 engine: the KV cache is `vllm:gpu_cache_usage_perc`.
const VLLM_V0 = `# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="Qwen/Qwen3-8B"} 3.0
# HELP vllm:num_requests_swapped Number of requests swapped to CPU.
# TYPE vllm:num_requests_swapped gauge
vllm:num_requests_swapped{model_name="Qwen/Qwen3-8B"} 0.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="Qwen/Qwen3-8B"} 2.0
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="Qwen/Qwen3-8B"} 0.4375
vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="Qwen/Qwen3-8B"} 12.0
`;

// vLLM V1: renamed to `vllm:kv_cache_usage_perc`; data-parallel engines label each series.
const VLLM_V1 = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 4.0
vllm:num_requests_running{engine="1",model_name="Qwen/Qwen3-8B"} 1.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-8B"} 0.0
vllm:num_requests_waiting{engine="1",model_name="Qwen/Qwen3-8B"} 7.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-8B"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="Qwen/Qwen3-8B"} 0.25
`;

const LLAMACPP = `# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 6886
# HELP llamacpp:kv_cache_usage_ratio KV-cache usage. 1 means 100 percent usage.
# TYPE llamacpp:kv_cache_usage_ratio gauge
llamacpp:kv_cache_usage_ratio 0.125
# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# HELP llamacpp:requests_deferred Number of requests deferred.
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 5
`;

const SGLANG = `# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="meta-llama/Llama-3.1-8B-Instruct"} 6.0
# HELP sglang:token_usage The token usage
# TYPE sglang:token_usage gauge
sglang:token_usage{model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.28
# HELP sglang:num_queue_reqs The number of requests in the waiting queue
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
`;

function read(text: string, names: EngineMetricNames) {
  const s = readPromSamples(text);
  const load = readLoad(s, names);
  return { engine: engineOfMetrics(s), running: load.running, waiting: load.waiting, kv: load.kvCacheUsage };
}

describe("engine metrics", () => {
  it("vLLM before V1 (gpu_cache_usage_perc)", () => {
    expect(read(VLLM_V0, VLLM_METRICS)).toEqual({ engine: "vllm", running: 3, waiting: 2, kv: 0.4375 });
  });
  it("vLLM V1 (kv_cache_usage_perc), summed and averaged over engines", () => {
    expect(read(VLLM_V1, VLLM_METRICS)).toEqual({ engine: "vllm", running: 5, waiting: 7, kv: 0.375 });
  });
  it("llama.cpp", () => {
    expect(read(LLAMACPP, LLAMACPP_METRICS)).toEqual({
      engine: "llamacpp",
      running: 2,
      waiting: 5,
      kv: 0.125,
    });
    // Current builds no longer export the KV ratio: unknown, not 0.
    const noKv = LLAMACPP.split("\n")
      .filter((l) => !l.includes("kv_cache"))
      .join("\n");
    expect(read(noKv, LLAMACPP_METRICS).kv).toBeUndefined();
  });
  it("SGLang", () => {
    expect(read(SGLANG, SGLANG_METRICS)).toEqual({ engine: "sglang", running: 6, waiting: 3, kv: 0.28 });
  });
  it("another engine's text yields nothing of these names", () => {
    expect(read(SGLANG, VLLM_METRICS)).toEqual({
      engine: "sglang",
      running: undefined,
      waiting: undefined,
      kv: undefined,
    });
    expect(engineOfMetrics(readPromSamples("up 1\n"))).toBeUndefined();
  });
});

describe("readPromLine", () => {
  it.each([
    ["up 1", { name: "up", labels: {}, value: 1 }],
    ['a{b="c"} 2.5 1700000000000', { name: "a", labels: { b: "c" }, value: 2.5 }],
    ['a{b="x,y}",c="q\\"uote\\\\"} -3e2', { name: "a", labels: { b: "x,y}", c: 'q"uote\\' }, value: -300 }],
    ['a{le="+Inf",} +Inf', { name: "a", labels: { le: "+Inf" }, value: Number.POSITIVE_INFINITY }],
    ["a NaN", { name: "a", labels: {}, value: Number.NaN }],
  ])("%s", (line, sample) => {
    expect(readPromLine(line)).toEqual(sample);
  });
  it.each(["# HELP a b", "", "a", "a{b=c} 1", 'a{b="c" 1', "a x", "9a 1", 'a{b="c"}1'])(
    "%j is not a sample",
    (line) => {
      expect(readPromLine(line)).toBeUndefined();
    },
  );
  it("sums skip NaN and fall through to the older name", () => {
    const s = readPromSamples("x NaN\ny 4\n");
    expect(sumFirst(s, ["x", "y"])).toBe(4);
    expect(meanFirst(s, ["z"])).toBeUndefined();
    expect(fraction(1.7)).toBe(1);
    expect(gauge(-1)).toBeUndefined();
  });
});
