// Emulator configuration: defaults, validation, the YAML/JSON config file, and `--listen`.
// Every time in here is emulated; the time scale maps it onto wall time.
import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import {
  OLLAMA_DEFAULT_MAX_LOADED_MODELS,
  OLLAMA_DEFAULT_MAX_QUEUE,
  OLLAMA_DEFAULT_NUM_PARALLEL,
  ollamaDefaultContextLength,
} from "../engines/index.js";
import { ErrorCode, invalidArgument, KubemootError } from "../errors/index.js";
import { type ModelConfig, type ModelSpec, resolveModel } from "./catalog.js";
import type { Clock } from "./clock.js";
import { type FaultRule, validateFaultRules } from "./faults.js";
import { DurationError, parseKeepAliveSetting } from "./go-duration.js";
import type { GpuConfig } from "./gpu-types.js";

/** Options of `startEmulator`; every field is optional (defaults in DEFAULTS below). */
export interface EmulatorOptions {
  /** "HOST:PORT" (port 0 picks a free one). Overridden by host/port when given. */
  listen?: string;
  host?: string;
  port?: number;
  /** Total VRAM of the emulated GPU, MiB. */
  vramMiB?: number;
  /** The catalog: a list, or a map of name → on-disk MiB (or → the rest of a ModelConfig). */
  models?: ModelConfig[] | Record<string, number | Omit<ModelConfig, "name">>;
  /** OLLAMA_NUM_PARALLEL. */
  numParallel?: number;
  /** OLLAMA_CONTEXT_LENGTH; 0 = Ollama's VRAM-based default. */
  contextLength?: number;
  /** Wall ms per emulated ms: 0.01 runs 100× faster. */
  timeScale?: number;
  loadMiBPerS?: number;
  /** Emulated ms an unload holds the VRAM. */
  unloadMs?: number;
  /** Generation speed, tokens per emulated second. */
  tokensPerS?: number;
  /** Prompt evaluation speed, tokens per emulated second. */
  promptTokensPerS?: number;
  /** Length of an answer when num_predict does not cut it (then done_reason "stop"). */
  outputTokens?: number;
  /** OLLAMA_MAX_QUEUE. */
  maxQueue?: number;
  /** OLLAMA_MAX_LOADED_MODELS; 0 = unlimited. */
  maxLoadedModels?: number;
  /** OLLAMA_KEEP_ALIVE: a Go duration, or seconds; negative = forever. */
  keepAlive?: string | number;
  faults?: FaultRule[];
  /** Serve DCGM-exporter-style /metrics. */
  dcgm?: boolean;
  /** Largest accepted request body, bytes. */
  maxBodyBytes?: number;
  /** Seed of probabilistic faults. */
  seed?: number;
  /** What /api/version reports. */
  version?: string;
  /** Injected clock (tests, simulations); default a ScaledClock at timeScale. */
  clock?: Clock;
  /** The engine emulated: "ollama" (default) or a fixed-model personality (engines/). */
  engine?: EmulatorEngine;
  /** Metric names of older ("legacy") or recent ("current", default) engine releases. */
  engineVersion?: EngineVersion;
  /** Personalities: concurrent sequences (default per engine; numParallel when only it is set). */
  slots?: number;
  /** Personalities: KV-cache capacity in tokens (default from VRAM, or n_ctx for llama.cpp). */
  kvCacheTokens?: number;
  /**
   * vLLM's --enable-prompt-tokens-details, SGLang's --enable-cache-report: report the prompt
   * tokens reused from the cache in usage.prompt_tokens_details (off by default, as there).
   * Ollama and llama.cpp always report them.
   */
  cacheReport?: boolean;
}

export const EMULATOR_ENGINES = ["ollama", "vllm", "llamacpp", "sglang"] as const;
export type EmulatorEngine = (typeof EMULATOR_ENGINES)[number];
export const ENGINE_VERSIONS = ["current", "legacy"] as const;
export type EngineVersion = (typeof ENGINE_VERSIONS)[number];

export interface ResolvedConfig {
  host: string;
  port: number;
  gpu: GpuConfig;
  models: ModelSpec[];
  defaultContextLength: number;
  timeScale: number;
  outputTokens: number;
  faults: FaultRule[];
  dcgm: boolean;
  maxBodyBytes: number;
  seed: number;
  version: string;
  engine: EmulatorEngine;
  engineVersion: EngineVersion;
  /** Personalities only: slots and KV tokens as given (undefined = the engine's default). */
  slots: number | undefined;
  kvCacheTokens: number | undefined;
  /** Personalities only: --context-length as given (0 = the model's own). */
  contextLengthOption: number;
  /** vLLM and SGLang: usage.prompt_tokens_details is reported (their flags). */
  cacheReport: boolean;
}

export const DEFAULTS = {
  host: "127.0.0.1",
  port: 11434,
  vramMiB: 24_576,
  models: { "qwen3:8b": 4863, "qwen3:14b": 9000 } as Record<string, number>,
  numParallel: OLLAMA_DEFAULT_NUM_PARALLEL,
  contextLength: 0,
  timeScale: 1,
  loadMiBPerS: 1024,
  unloadMs: 1000,
  tokensPerS: 50,
  promptTokensPerS: 2000,
  outputTokens: 32,
  maxQueue: OLLAMA_DEFAULT_MAX_QUEUE,
  maxLoadedModels: OLLAMA_DEFAULT_MAX_LOADED_MODELS,
  keepAlive: "5m",
  maxBodyBytes: 8 * 1024 * 1024,
  seed: 1,
  version: "0.13.0",
} as const;

const OPTION_KEYS = new Set([
  "listen",
  "host",
  "port",
  "vramMiB",
  "models",
  "numParallel",
  "contextLength",
  "timeScale",
  "loadMiBPerS",
  "unloadMs",
  "tokensPerS",
  "promptTokensPerS",
  "outputTokens",
  "maxQueue",
  "maxLoadedModels",
  "keepAlive",
  "faults",
  "dcgm",
  "maxBodyBytes",
  "seed",
  "version",
  "clock",
  "engine",
  "engineVersion",
  "slots",
  "kvCacheTokens",
  "cacheReport",
]);

/** Parses "HOST:PORT", "[::1]:PORT", ":PORT", "HOST" (port 11434) or "http://HOST:PORT". */
export function parseListen(text: string): { host: string; port: number } {
  let s = text
    .trim()
    .replace(/^https?:\/\//, "")
    .replace(/\/+$/, "");
  let host = DEFAULTS.host as string;
  let portText: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(.*))?$/.exec(s);
  if (v6) {
    host = v6[1] as string;
    portText = v6[2];
  } else {
    const colon = s.lastIndexOf(":");
    if (colon >= 0) {
      portText = s.slice(colon + 1);
      s = s.slice(0, colon);
    }
    if (s !== "") host = s;
  }
  if (portText === undefined || portText === "") return { host, port: DEFAULTS.port };
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw invalidArgument("listen", `expected HOST:PORT with a port 0..65535, got "${text}"`);
  }
  return { host, port };
}

function num(
  field: string,
  v: unknown,
  fallback: number,
  opts: { min?: number; integer?: boolean; positive?: boolean } = {},
): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v))
    throw invalidArgument(field, `must be a number, got ${JSON.stringify(v)}`);
  if (opts.integer && !Number.isInteger(v)) throw invalidArgument(field, `must be an integer, got ${v}`);
  if (opts.positive && !(v > 0)) throw invalidArgument(field, `must be greater than 0, got ${v}`);
  if (opts.min !== undefined && v < opts.min)
    throw invalidArgument(field, `must be at least ${opts.min}, got ${v}`);
  return v;
}

/** The catalog option as a list of model configurations (the defaults when absent). */
export function modelList(models: EmulatorOptions["models"]): ModelConfig[] {
  if (models === undefined)
    return Object.entries(DEFAULTS.models).map(([name, onDiskMiB]) => ({ name, onDiskMiB }));
  if (Array.isArray(models)) return models;
  if (typeof models !== "object" || models === null)
    throw invalidArgument("models", "must be a list or a map");
  return Object.entries(models).map(([name, v]) =>
    typeof v === "number" ? { name, onDiskMiB: v } : { ...(v as Omit<ModelConfig, "name">), name },
  );
}

/** Applies defaults and validates; throws KubemootError (InvalidArgument) naming the field. */
export function resolveConfig(options: EmulatorOptions = {}): ResolvedConfig {
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw invalidArgument(key, "unknown emulator option");
  }
  const listen =
    options.listen !== undefined ? parseListen(options.listen) : { host: DEFAULTS.host, port: DEFAULTS.port };
  const host = options.host ?? listen.host;
  const port = num("port", options.port, listen.port, { integer: true, min: 0 });
  if (port > 65535) throw invalidArgument("port", `must be at most 65535, got ${port}`);
  const vramMiB = num("vramMiB", options.vramMiB, DEFAULTS.vramMiB, { positive: true });
  const contextLength = num("contextLength", options.contextLength, DEFAULTS.contextLength, {
    integer: true,
    min: 0,
  });
  let keepAliveMs: number;
  try {
    keepAliveMs = parseKeepAliveSetting(options.keepAlive ?? DEFAULTS.keepAlive);
  } catch (err) {
    if (err instanceof DurationError) throw invalidArgument("keepAlive", err.message);
    throw err;
  }
  const engine = options.engine ?? "ollama";
  if (!(EMULATOR_ENGINES as readonly string[]).includes(engine))
    throw invalidArgument("engine", `must be one of ${EMULATOR_ENGINES.join(", ")}, got "${String(engine)}"`);
  const engineVersion = options.engineVersion ?? "current";
  if (!(ENGINE_VERSIONS as readonly string[]).includes(engineVersion))
    throw invalidArgument(
      "engineVersion",
      `must be one of ${ENGINE_VERSIONS.join(", ")}, got "${String(engineVersion)}"`,
    );
  // A fixed-model engine serves one model: its default is the first of Ollama's defaults.
  const catalog =
    options.models === undefined && engine !== "ollama"
      ? modelList(undefined).slice(0, 1)
      : modelList(options.models);
  const specs = catalog.map(resolveModel);
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.name)) throw invalidArgument("models", `model "${s.name}" is listed twice`);
    seen.add(s.name);
  }
  const gpu: GpuConfig = {
    vramMiB,
    numParallel: num("numParallel", options.numParallel, DEFAULTS.numParallel, { integer: true, min: 1 }),
    contextLength,
    loadMiBPerS: num("loadMiBPerS", options.loadMiBPerS, DEFAULTS.loadMiBPerS, { positive: true }),
    unloadMs: num("unloadMs", options.unloadMs, DEFAULTS.unloadMs, { min: 0 }),
    tokensPerS: num("tokensPerS", options.tokensPerS, DEFAULTS.tokensPerS, { positive: true }),
    promptTokensPerS: num("promptTokensPerS", options.promptTokensPerS, DEFAULTS.promptTokensPerS, {
      positive: true,
    }),
    maxQueue: num("maxQueue", options.maxQueue, DEFAULTS.maxQueue, { integer: true, min: 0 }),
    maxLoadedModels: num("maxLoadedModels", options.maxLoadedModels, DEFAULTS.maxLoadedModels, {
      integer: true,
      min: 0,
    }),
    keepAliveMs,
  };
  const version = options.version ?? DEFAULTS.version;
  if (typeof version !== "string" || version === "")
    throw invalidArgument("version", "must be a non-empty string");
  if (options.dcgm !== undefined && typeof options.dcgm !== "boolean")
    throw invalidArgument("dcgm", "must be true or false");
  if (options.cacheReport !== undefined && typeof options.cacheReport !== "boolean")
    throw invalidArgument("cacheReport", "must be true or false");
  return {
    host,
    port,
    gpu,
    models: specs,
    defaultContextLength: contextLength > 0 ? contextLength : ollamaDefaultContextLength(vramMiB),
    timeScale: num("timeScale", options.timeScale, DEFAULTS.timeScale, { positive: true }),
    outputTokens: num("outputTokens", options.outputTokens, DEFAULTS.outputTokens, { integer: true, min: 0 }),
    faults: options.faults === undefined ? [] : validateFaultRules(options.faults),
    dcgm: options.dcgm ?? false,
    maxBodyBytes: num("maxBodyBytes", options.maxBodyBytes, DEFAULTS.maxBodyBytes, {
      integer: true,
      positive: true,
    }),
    seed: num("seed", options.seed, DEFAULTS.seed, { integer: true }),
    version,
    engine,
    engineVersion,
    slots:
      options.slots !== undefined
        ? num("slots", options.slots, 1, { integer: true, min: 1 })
        : options.numParallel !== undefined && engine !== "ollama"
          ? gpu.numParallel
          : undefined,
    kvCacheTokens:
      options.kvCacheTokens === undefined
        ? undefined
        : num("kvCacheTokens", options.kvCacheTokens, 1, { integer: true, min: 1 }),
    contextLengthOption: contextLength,
    cacheReport: options.cacheReport === true,
  };
}

/** Reads a YAML or JSON config file (keys as in EmulatorOptions, camelCase). */
export async function loadConfigFile(path: string): Promise<EmulatorOptions> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new KubemootError(ErrorCode.InvalidConfig, `--config ${path}: ${(err as Error).message}`, {
      field: "config",
      cause: err,
    });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new KubemootError(ErrorCode.InvalidConfig, `--config ${path}: ${(err as Error).message}`, {
      field: "config",
      cause: err,
    });
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new KubemootError(ErrorCode.InvalidConfig, `--config ${path}: expected a mapping of options`, {
      field: "config",
    });
  }
  const opts = doc as Record<string, unknown>;
  for (const key of Object.keys(opts)) {
    if (!OPTION_KEYS.has(key) || key === "clock") {
      throw new KubemootError(ErrorCode.InvalidConfig, `--config ${path}: unknown option "${key}"`, {
        field: `config.${key}`,
      });
    }
  }
  return opts as EmulatorOptions;
}
