// The emulated model catalog: what is "on disk" and what each model costs in VRAM once loaded.
//
// Footprint at load = weights + KV slab, with
//   weights  = the on-disk size (GGUF weights are mapped into VRAM as they are), and
//   KV slab  = ceil(num_ctx × num_parallel × kvMiBPerToken).
// kvMiBPerToken defaults to 0.125 × √(parameters in billions / 8) MiB: 0.125 MiB/token is an
// 8B model with an f16 KV cache (36 layers × 8 KV heads × 128 dims × 2 (K and V) × 2 bytes ≈
// 0.14 MiB); the square root follows how layer count and width grow together with size
// (14B → 0.165, 32B → 0.25, 70B → 0.37 MiB/token, within ~15% of the real f16 caches).
// The parameter count comes from the tag ("qwen3:8b" → 8B, "qwen3:0.6b", "gemma3:270m") or,
// failing that, from the on-disk size at Q4_K_M's ~4.85 bits per weight.
import { createHash } from "node:crypto";
import { normalizeModelName } from "../engines/index.js";
import { invalidArgument } from "../errors/index.js";

export interface ModelConfig {
  name: string;
  /** Size on disk (what /api/tags reports), MiB. */
  onDiskMiB: number;
  /** Weights in VRAM, MiB; defaults to onDiskMiB. */
  weightsMiB?: number;
  /** The model's maximum (trained) context; num_ctx is clamped to it. Default by family. */
  contextLength?: number;
  family?: string;
  /** Ollama's "parameter_size", e.g. "8.2B". Default from the tag or the size. */
  parameterSize?: string;
  /** Default "Q4_K_M". */
  quantization?: string;
  /** KV cache per token per slot, MiB. Default 0.125 × √(params_B / 8). */
  kvMiBPerToken?: number;
  /** Generation speed of this model, tokens/s; default the emulator's tokensPerS. */
  tokensPerS?: number;
  /**
   * Prompt evaluation speed of this model, tokens/s; default the emulator's promptTokensPerS.
   * A small embedding model evaluates far faster than the chat model beside it.
   */
  promptTokensPerS?: number;
  /** Set for an embedding model: the length of its vectors (it then cannot chat). */
  embeddingLength?: number;
  /** Ollama's capabilities ("completion", "tools", "thinking", "embedding"); default by family. */
  capabilities?: Capability[];
}

export const CAPABILITIES = ["completion", "tools", "thinking", "embedding"] as const;
export type Capability = (typeof CAPABILITIES)[number];

export interface ModelSpec {
  name: string;
  onDiskMiB: number;
  weightsMiB: number;
  contextLength: number;
  family: string;
  parameterSize: string;
  parameterCount: number;
  quantization: string;
  kvMiBPerToken: number;
  tokensPerS: number | undefined;
  promptTokensPerS: number | undefined;
  /** sha256 hex of the name: stable across runs, like a real blob digest. */
  digest: string;
  capabilities: Capability[];
  /** Vector length of an embedding model; undefined for a chat model. */
  embeddingLength: number | undefined;
}

/**
 * Embedding models known by name (Ollama library sizes): vector length, trained context,
 * architecture and parameter count, so `--model nomic-embed-text=262` is enough.
 */
const KNOWN_EMBEDDERS: Array<[RegExp, { dims: number; ctx: number; family: string; params: string }]> = [
  [/^nomic-embed-text/, { dims: 768, ctx: 2048, family: "nomic-bert", params: "137M" }],
  [/^mxbai-embed-large/, { dims: 1024, ctx: 512, family: "bert", params: "334M" }],
  [/^all-minilm/, { dims: 384, ctx: 512, family: "bert", params: "23M" }],
  [/^snowflake-arctic-embed2/, { dims: 1024, ctx: 8192, family: "xlmroberta", params: "568M" }],
  [/^snowflake-arctic-embed/, { dims: 1024, ctx: 512, family: "bert", params: "334M" }],
  [/^bge-m3/, { dims: 1024, ctx: 8192, family: "bert", params: "567M" }],
  [/^embeddinggemma/, { dims: 768, ctx: 2048, family: "gemma3", params: "307M" }],
  [/^qwen3-embedding/, { dims: 1024, ctx: 40_960, family: "qwen3", params: "0.6B" }],
];

/** Families whose chat models think (Ollama's "thinking" capability) and call tools. */
const THINKING = /^(qwen3|deepseek-r1|gpt-oss|qwq|magistral)/;
/** Chat families without Ollama's "tools" capability. */
const NO_TOOLS = /^(gemma|llama2|deepseek-r1|phi3|tinyllama)/;

function defaultCapabilities(base: string, embedding: boolean): Capability[] {
  if (embedding) return ["embedding"];
  const caps: Capability[] = ["completion"];
  if (!NO_TOOLS.test(base)) caps.push("tools");
  if (THINKING.test(base)) caps.push("thinking");
  return caps;
}

const FAMILY_CONTEXT: Array<[RegExp, number]> = [
  [/^qwen3/, 40_960],
  [/^qwen2/, 32_768],
  [/^mistral/, 32_768],
  [/^llama2/, 4096],
  [/^(llama|gemma3|phi4|deepseek|gpt-oss)/, 131_072],
];
const DEFAULT_MAX_CONTEXT = 131_072;
/** Q4_K_M averages about 4.85 bits per weight. */
const BITS_PER_WEIGHT = 4.85;

function baseName(name: string): string {
  const noTag = name.split(":")[0] ?? name;
  return noTag.slice(noTag.lastIndexOf("/") + 1).toLowerCase();
}

function paramsFromTag(name: string): number | undefined {
  const tag = name.split(":")[1] ?? "";
  const m = /(?:^|[-_])(\d+(?:\.\d+)?)([bm])(?=$|[-_])/i.exec(tag);
  if (!m) return undefined;
  const n = Number(m[1]);
  return (m[2] ?? "").toLowerCase() === "m" ? n / 1000 : n;
}

function parseParameterSize(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([KMBT])$/i.exec(s.trim());
  if (!m) return undefined;
  const scale: Record<string, number> = { K: 1e-6, M: 1e-3, B: 1, T: 1e3 };
  return Number(m[1]) * (scale[(m[2] ?? "B").toUpperCase()] ?? 1);
}

function formatParameterSize(billions: number): string {
  if (billions >= 1) return `${billions.toFixed(1)}B`;
  return `${(billions * 1000).toFixed(2)}M`;
}

function positive(field: string, v: number | undefined, integer = false): void {
  if (v === undefined) return;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v))) {
    throw invalidArgument(field, `must be a positive ${integer ? "integer" : "number"}, got ${String(v)}`);
  }
}

/** Resolves a model's configuration into a full spec (defaults documented above). */
export function resolveModel(cfg: ModelConfig): ModelSpec {
  if (typeof cfg.name !== "string" || cfg.name.trim() === "")
    throw invalidArgument("model.name", "is required");
  const name = normalizeModelName(cfg.name);
  const field = `model ${name}`;
  positive(`${field}: onDiskMiB`, cfg.onDiskMiB);
  if (cfg.onDiskMiB === undefined) throw invalidArgument(`${field}: onDiskMiB`, "is required");
  positive(`${field}: weightsMiB`, cfg.weightsMiB);
  positive(`${field}: contextLength`, cfg.contextLength, true);
  positive(`${field}: kvMiBPerToken`, cfg.kvMiBPerToken);
  positive(`${field}: tokensPerS`, cfg.tokensPerS);
  positive(`${field}: promptTokensPerS`, cfg.promptTokensPerS);
  positive(`${field}: embeddingLength`, cfg.embeddingLength, true);
  const base = baseName(name);
  const known = KNOWN_EMBEDDERS.find(([re]) => re.test(base))?.[1];
  if (cfg.capabilities !== undefined) {
    if (!Array.isArray(cfg.capabilities) || cfg.capabilities.some((c) => !CAPABILITIES.includes(c)))
      throw invalidArgument(`${field}: capabilities`, `must be a list of ${CAPABILITIES.join(", ")}`);
  }
  const embeddingLength =
    cfg.embeddingLength ??
    (cfg.capabilities?.includes("embedding") || (known && !cfg.capabilities)
      ? (known?.dims ?? 768)
      : undefined);
  const capabilities = cfg.capabilities ?? defaultCapabilities(base, embeddingLength !== undefined);
  const family = cfg.family ?? known?.family ?? (base.startsWith("llama") ? "llama" : base);
  const fromSize = (cfg.onDiskMiB * 1024 * 1024 * 8) / BITS_PER_WEIGHT / 1e9;
  const billions =
    (cfg.parameterSize ? parseParameterSize(cfg.parameterSize) : undefined) ??
    paramsFromTag(name) ??
    (known && embeddingLength !== undefined ? parseParameterSize(known.params) : undefined) ??
    fromSize;
  const contextLength =
    cfg.contextLength ??
    (embeddingLength !== undefined ? known?.ctx : undefined) ??
    FAMILY_CONTEXT.find(([re]) => re.test(base))?.[1] ??
    DEFAULT_MAX_CONTEXT;
  const kv =
    cfg.kvMiBPerToken ?? Math.max(1 / 4096, Math.round(0.125 * Math.sqrt(billions / 8) * 4096) / 4096);
  return {
    name,
    onDiskMiB: cfg.onDiskMiB,
    weightsMiB: cfg.weightsMiB ?? cfg.onDiskMiB,
    contextLength,
    family,
    parameterSize:
      cfg.parameterSize ??
      (known && embeddingLength !== undefined ? known.params : formatParameterSize(billions)),
    parameterCount: Math.round(billions * 1e9),
    // Ollama's library ships embedding models unquantised.
    quantization: cfg.quantization ?? (embeddingLength !== undefined ? "F16" : "Q4_K_M"),
    kvMiBPerToken: kv,
    tokensPerS: cfg.tokensPerS,
    promptTokensPerS: cfg.promptTokensPerS,
    digest: createHash("sha256").update(name).digest("hex"),
    capabilities,
    embeddingLength,
  };
}

/** Ollama loads a model without "completion" (an embedding model) with one slot. */
export function slotsFor(spec: ModelSpec, numParallel: number): number {
  return spec.capabilities.includes("completion") ? numParallel : 1;
}

/** KV slab reserved at load: num_ctx × num_parallel × kvMiBPerToken, rounded up to whole MiB. */
export function kvSlabMiB(spec: ModelSpec, numCtx: number, numParallel: number): number {
  return Math.ceil(numCtx * numParallel * spec.kvMiBPerToken);
}

/** VRAM a model takes once loaded with this context and slot count. */
export function footprintMiB(spec: ModelSpec, numCtx: number, numParallel: number): number {
  return Math.ceil(spec.weightsMiB) + kvSlabMiB(spec, numCtx, numParallel);
}

const MODEL_KEYS: Record<string, keyof ModelConfig> = {
  weights: "weightsMiB",
  context: "contextLength",
  ctx: "contextLength",
  family: "family",
  params: "parameterSize",
  quant: "quantization",
  kv: "kvMiBPerToken",
  tps: "tokensPerS",
  pps: "promptTokensPerS",
  dims: "embeddingLength",
  caps: "capabilities",
};

/**
 * Parses `--model NAME=ON_DISK_MIB[,key=value...]` with keys weights, context (or ctx),
 * family, params, quant, kv, tps, pps (prompt tokens/s), dims (an embedding model's vector length) and caps
 * (capabilities joined by "+"); e.g. `qwen3:8b=4863,context=40960,kv=0.14`.
 */
export function parseModelFlag(text: string): ModelConfig {
  const eq = text.indexOf("=");
  if (eq <= 0) throw invalidArgument("--model", `expected NAME=ON_DISK_MIB, got "${text}"`);
  const name = text.slice(0, eq).trim();
  const [sizeText = "", ...extras] = text.slice(eq + 1).split(",");
  const onDiskMiB = Number(sizeText);
  if (sizeText.trim() === "" || !Number.isFinite(onDiskMiB) || onDiskMiB <= 0) {
    throw invalidArgument(
      "--model",
      `${name}: on-disk size must be a positive number of MiB, got "${sizeText}"`,
    );
  }
  const cfg: ModelConfig = { name, onDiskMiB };
  for (const extra of extras) {
    const [k = "", v = ""] = extra.split("=", 2).map((s) => s.trim());
    const key = MODEL_KEYS[k];
    if (!key) {
      throw invalidArgument(
        "--model",
        `${name}: unknown key "${k}" (known: ${Object.keys(MODEL_KEYS).join(", ")})`,
      );
    }
    if (key === "capabilities") {
      cfg.capabilities = v.split("+").map((c) => c.trim()) as Capability[];
    } else if (key === "family" || key === "parameterSize" || key === "quantization") {
      (cfg as unknown as Record<string, unknown>)[key] = v;
    } else {
      const n = Number(v);
      if (v === "" || !Number.isFinite(n))
        throw invalidArgument("--model", `${name}: ${k} must be a number, got "${v}"`);
      (cfg as unknown as Record<string, unknown>)[key] = n;
    }
  }
  return cfg;
}
