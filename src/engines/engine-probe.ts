// What probing a fixed-model engine (vLLM, llama.cpp's server, SGLang, any OpenAI-compatible
// server) yields, the error for a wrong engine declared, and the detection that names the
// engine actually answering. Facts on each engine's endpoints: src/engines/README.md.
import type { Engine } from "../core/index.js";
import type { EngineHttp } from "./engine-http.js";
import { EngineError } from "./errors.js";
import { meanFirst, type PromSample, readPromSamples, sumFirst } from "./prom-text.js";

export type FixedEngine = Exclude<Engine, "ollama">;

export interface EngineProbe {
  engine: FixedEngine;
  /** The models it serves (ids as its OpenAI routes name them). */
  models: string[];
  /** Context limit (tokens) per served model, where the engine tells it. */
  contextLengths: Record<string, number>;
  /** Parallel slots, where the engine tells them (llama.cpp total_slots, SGLang max_running_requests). */
  slots?: number | undefined;
  /** Requests being processed / waiting, from /metrics (or llama.cpp's /slots). */
  running?: number | undefined;
  waiting?: number | undefined;
  /** Fraction 0..1 of the KV cache in use. */
  kvCacheUsage?: number | undefined;
  /** The engine answers POST /tokenize. */
  tokenize: boolean;
  /**
   * Memory the engine's process holds (MiB), where it exports it: a CPU engine's footprint in
   * place of the card (docs/rules/engines.md "A real llama.cpp engine").
   */
  residentMiB?: number | undefined;
}

/** What a prober remembers between probes of one provider (answers that do not change). */
export interface ProbeMemo {
  tokenize?: boolean;
}

/** An engine's /metrics names for its load, each list newest name first. */
export interface EngineMetricNames {
  running: readonly string[];
  waiting: readonly string[];
  kvCacheUsage: readonly string[];
}

/** A provider declared as one engine answers as another. */
export class EngineMismatchError extends EngineError {
  readonly declared: Engine;
  readonly detected: Engine;
  constructor(endpoint: string, declared: Engine, detected: Engine) {
    super("mismatch", `declared ${declared}, but ${detected} answers`, {
      endpoint,
      operation: "probe",
    });
    this.declared = declared;
    this.detected = detected;
  }
}

export function isEngineMismatch(err: unknown): err is EngineMismatchError {
  return err instanceof EngineMismatchError;
}

/** The value as a JSON object, or undefined. */
export function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/** A positive whole number, or undefined. */
export function positiveInt(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 1 ? Math.floor(v) : undefined;
}

/** A count ≥ 0 (gauges are floats: "3.0"), or undefined. */
export function gauge(v: number | undefined): number | undefined {
  return v !== undefined && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined;
}

/** A fraction clamped to 0..1, or undefined. */
export function fraction(v: number | undefined): number | undefined {
  return v !== undefined && Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : undefined;
}

export interface OpenAiModels {
  models: string[];
  contextLengths: Record<string, number>;
}

/** Reads GET /v1/models (`data[].id`, and `max_model_len` where vLLM and SGLang add it). */
export function readOpenAiModels(json: unknown): OpenAiModels | undefined {
  const data = obj(json)?.data;
  if (!Array.isArray(data)) return undefined;
  const models: string[] = [];
  const contextLengths: Record<string, number> = {};
  for (const m of data) {
    const id = obj(m)?.id;
    if (typeof id !== "string" || id === "" || models.includes(id)) continue;
    models.push(id);
    const len = positiveInt(obj(m)?.max_model_len);
    if (len !== undefined) contextLengths[id] = len;
  }
  return { models, contextLengths };
}

/** GET /v1/models, required: a 404 or another shape means this is not that engine. */
export async function fetchOpenAiModels(http: EngineHttp): Promise<OpenAiModels> {
  const a = await http.get("/v1/models");
  const read = a.status === 200 ? readOpenAiModels(a.json) : undefined;
  if (!read) throw http.fail("/v1/models", a, `no OpenAI model list (status ${a.status})`);
  return read;
}

/** GET /metrics when the engine serves it (it may be turned off); [] otherwise. */
export async function fetchMetrics(http: EngineHttp): Promise<PromSample[]> {
  const a = await http.get("/metrics", "text/plain");
  return a.status === 200 ? readPromSamples(a.text) : [];
}

/** Running and waiting requests and KV-cache use read from /metrics (undefined where absent). */
export function readLoad(
  samples: readonly PromSample[],
  names: EngineMetricNames,
): Pick<EngineProbe, "running" | "waiting" | "kvCacheUsage"> {
  return {
    running: gauge(sumFirst(samples, names.running)),
    waiting: gauge(sumFirst(samples, names.waiting)),
    kvCacheUsage: fraction(meanFirst(samples, names.kvCacheUsage)),
  };
}

/** The engine whose metric names these are, by prefix; undefined when none is recognised. */
export function engineOfMetrics(samples: readonly PromSample[]): FixedEngine | undefined {
  for (const [prefix, engine] of [
    ["vllm:", "vllm"],
    ["llamacpp:", "llamacpp"],
    ["sglang:", "sglang"],
  ] as const) {
    if (samples.some((s) => s.name.startsWith(prefix))) return engine;
  }
  return undefined;
}

/**
 * GET /health: a 200 is healthy; a 404 means the server has no such route (an OpenAI server);
 * anything else (503 while loading) fails the probe.
 */
export async function checkHealth(http: EngineHttp): Promise<void> {
  const a = await http.get("/health");
  if (a.status === 200 || a.status === 404) return;
  throw http.fail("/health", a, `not healthy (status ${a.status})`);
}

/** Whether POST /tokenize answers: asked at the first probe, then remembered in `memo` (a route does not come and go). */
export async function answersTokenize(http: EngineHttp, memo: ProbeMemo, body: unknown): Promise<boolean> {
  if (memo.tokenize === undefined) {
    const a = await http.post("/tokenize", body);
    memo.tokenize = a.status === 200 && obj(a.json) !== undefined;
  }
  return memo.tokenize;
}

/**
 * Which engine answers at this endpoint, from the routes only one engine has: Ollama's
 * /api/version, llama.cpp's /props, SGLang's /get_model_info (or /model_info), then /v1/models (with
 * `max_model_len`: vLLM; without: some OpenAI-compatible server). Undefined when nothing
 * answers as any of them. Used only after a probe failed, so its cost does not matter.
 */
export async function detectEngine(http: EngineHttp): Promise<Engine | undefined> {
  const safe = async (path: string) => {
    try {
      const a = await http.get(path);
      return a.status === 200 ? obj(a.json) : undefined;
    } catch {
      return undefined;
    }
  };
  if (typeof (await safe("/api/version"))?.version === "string") return "ollama";
  const props = await safe("/props");
  if (props && (props.total_slots !== undefined || obj(props.default_generation_settings))) return "llamacpp";
  for (const path of ["/get_model_info", "/model_info"]) {
    if (typeof (await safe(path))?.model_path === "string") return "sglang";
  }
  const models = readOpenAiModels(await safe("/v1/models"));
  if (!models) return undefined;
  return Object.keys(models.contextLengths).length > 0 ? "vllm" : "openai";
}
