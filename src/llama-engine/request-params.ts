// The generation fields a request may carry, read with llama.cpp server's names and defaults
// (docs/rules/engines.md "A real llama.cpp engine"): n_predict (or OpenAI's max_tokens /
// max_completion_tokens), sampling (temperature 0.8, top_k 40, top_p 0.95, min_p 0.05, seed -1
// = random, repeat_penalty 1.0 over the last 64 tokens, presence and frequency penalties 0), stop
// strings, stream, cache_prompt (default true) and id_slot (-1 = any). A field of the wrong type
// or out of range is a 400 naming it; llama.cpp would fall back to the default silently.
import { randomInt } from "node:crypto";
import { LLAMACPP_DEFAULT_PARAMS } from "../engines/index.js";
import { invalidArgument } from "../errors/index.js";

export type Body = Record<string, unknown>;

/** At most this many stop strings, each at most this long (bounded input). */
const MAX_STOP_STRINGS = 16;
const MAX_STOP_CHARS = 256;

export interface Sampling {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  seed: number;
  repeatPenalty: number;
  repeatLastN: number;
  presencePenalty: number;
  frequencyPenalty: number;
}

export interface GenerationParams {
  /** Tokens to generate; -1 = until the end of generation or of the slot's context. */
  nPredict: number;
  sampling: Sampling;
  stop: string[];
  stream: boolean;
  cachePrompt: boolean;
  /** The slot asked for; -1 = whichever serves best. */
  idSlot: number;
  ignoreEos: boolean;
}

function present(body: Body, field: string): boolean {
  return body[field] !== undefined && body[field] !== null;
}

function numberField(body: Body, field: string, dflt: number, min = -Infinity, max = Infinity): number {
  if (!present(body, field)) return dflt;
  const v = body[field];
  if (typeof v !== "number" || !Number.isFinite(v)) throw invalidArgument(field, "must be a number");
  if (v < min || v > max) throw invalidArgument(field, `must be between ${min} and ${max}, got ${v}`);
  return v;
}

function intField(body: Body, field: string, dflt: number, min = -Infinity, max = Infinity): number {
  const v = numberField(body, field, dflt, min, max);
  if (!Number.isInteger(v)) throw invalidArgument(field, `must be a whole number, got ${v}`);
  return v;
}

export function boolField(body: Body, field: string, dflt: boolean): boolean {
  if (!present(body, field)) return dflt;
  const v = body[field];
  if (typeof v !== "boolean") throw invalidArgument(field, "must be a boolean");
  return v;
}

/** `stop`: a string or a list of strings (OpenAI allows both). */
function stopField(body: Body): string[] {
  if (!present(body, "stop")) return [];
  const v = body.stop;
  const list = typeof v === "string" ? [v] : v;
  if (!Array.isArray(list) || !list.every((s) => typeof s === "string"))
    throw invalidArgument("stop", "must be a string or a list of strings");
  if (list.length > MAX_STOP_STRINGS) throw invalidArgument("stop", `at most ${MAX_STOP_STRINGS} strings`);
  if (list.some((s) => s.length > MAX_STOP_CHARS))
    throw invalidArgument("stop", `each string at most ${MAX_STOP_CHARS} characters`);
  return list.filter((s) => s !== "");
}

/** The tokens to generate: n_predict, else max_completion_tokens, else max_tokens; -1 = no limit. */
function nPredict(body: Body): number {
  for (const field of ["n_predict", "max_completion_tokens", "max_tokens"]) {
    if (present(body, field)) return intField(body, field, -1, -1, 1_000_000);
  }
  return -1;
}

/** llama-server's defaults (the same /props reports). */
const D = LLAMACPP_DEFAULT_PARAMS;

export function readSampling(body: Body): Sampling {
  const seed = intField(body, "seed", -1, -1, 0xffffffff);
  return {
    temperature: numberField(body, "temperature", D.temperature, 0, 100),
    topK: intField(body, "top_k", D.top_k, 0, 1_000_000),
    topP: numberField(body, "top_p", D.top_p, 0, 1),
    minP: numberField(body, "min_p", D.min_p, 0, 1),
    seed: seed === -1 ? randomInt(0, 0xffffffff) : seed,
    repeatPenalty: numberField(body, "repeat_penalty", D.repeat_penalty, 0, 100),
    repeatLastN: intField(body, "repeat_last_n", D.repeat_last_n, -1, 1_000_000),
    presencePenalty: numberField(body, "presence_penalty", D.presence_penalty, -2, 2),
    frequencyPenalty: numberField(body, "frequency_penalty", D.frequency_penalty, -2, 2),
  };
}

export function readGenerationParams(body: Body): GenerationParams {
  return {
    nPredict: nPredict(body),
    sampling: readSampling(body),
    stop: stopField(body),
    stream: boolField(body, "stream", false),
    cachePrompt: boolField(body, "cache_prompt", true),
    idSlot: intField(body, "id_slot", -1, -1, 1_000_000),
    ignoreEos: boolField(body, "ignore_eos", false),
  };
}

/** The sampling settings echoed in /slots and generation_settings, with llama.cpp's names. */
export function samplingJson(s: Sampling, nPredict: number, stream: boolean): Record<string, unknown> {
  return {
    seed: s.seed,
    temperature: s.temperature,
    top_k: s.topK,
    top_p: s.topP,
    min_p: s.minP,
    repeat_last_n: s.repeatLastN,
    repeat_penalty: s.repeatPenalty,
    presence_penalty: s.presencePenalty,
    frequency_penalty: s.frequencyPenalty,
    max_tokens: nPredict,
    n_predict: nPredict,
    stream,
  };
}
