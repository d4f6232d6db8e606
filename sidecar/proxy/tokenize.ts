// Exact prompt token counts from the engine's own tokenizer (POST /tokenize), for providers
// whose state says they answer it (`tokenize: true`, docs/rules/engines.md). The request shape
// is the engine's (src/engines/README.md):
//   vLLM (and a generic OpenAI server that has it): {model, messages, tools?} renders the chat
//     template → {count, max_model_len, tokens}; {model, prompt} → the same for raw text;
//   llama.cpp: POST /apply-template {model, messages} → {prompt}, then POST /tokenize {model,
//     content, add_special} → {tokens} (`model` routes on a server of several models);
//   SGLang: {model, prompt} (raw text only: its chat prompts are left to the estimate).
// Counts are cached by a hash of what was tokenized while some call needs them, bounded; any
// failure or a slow engine (over TOKENIZE_TIMEOUT_MS) gives undefined: the estimate decides.
import { createHash } from "node:crypto";
import type { Dispatcher } from "undici";
import type { Engine } from "../../src/core/index.js";

/** Longest wait for an engine's tokenizer before the estimate decides instead. */
export const TOKENIZE_TIMEOUT_MS = 2_000;
/** Counts held at once (one per distinct prompt of the calls in flight). */
export const TOKEN_CACHE_ENTRIES = 1_024;

export interface ExactCount {
  tokens: number;
  /** The engine's context limit, when its answer says it (vLLM, SGLang: max_model_len). */
  limit?: number;
}

/** What to tokenize: a chat (OpenAI-shaped messages) or a raw prompt. */
export type TokenizeInput =
  | { kind: "chat"; messages: unknown[]; tools?: unknown[] }
  | { kind: "prompt"; prompt: string };

/**
 * Counts shared by the calls that need them: an entry lives while at least one call holds it
 * (a call's retry on another copy of the same engine asks again without cost), and there are
 * at most `max` entries (past that, counts are asked for without caching).
 */
export class TokenCountCache {
  private readonly entries = new Map<string, { count: Promise<ExactCount | undefined>; holders: number }>();
  constructor(private readonly max = TOKEN_CACHE_ENTRIES) {}

  get size(): number {
    return this.entries.size;
  }

  /** The count for `key`, computed once while held; call the returned release when done. */
  hold(
    key: string,
    compute: () => Promise<ExactCount | undefined>,
  ): { count: Promise<ExactCount | undefined>; release: () => void } {
    const e = this.entries.get(key);
    if (e) {
      e.holders++;
      return { count: e.count, release: this.releaser(key, e) };
    }
    const count = compute();
    if (this.entries.size >= this.max) return { count, release: () => undefined };
    const entry = { count, holders: 1 };
    this.entries.set(key, entry);
    return { count, release: this.releaser(key, entry) };
  }

  private releaser(key: string, e: { holders: number }): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--e.holders <= 0 && this.entries.get(key) === e) this.entries.delete(key);
    };
  }
}

/** The request(s) that count `input` on `engine`, or undefined when it has no exact count for it. */
export function tokenizeRequests(
  engine: Engine,
  model: string,
  input: TokenizeInput,
): { path: string; body: Record<string, unknown> }[] | undefined {
  if (engine === "ollama") return undefined;
  if (engine === "llamacpp") {
    // `model` routes the request on a server of several models; one of a single model ignores it.
    if (input.kind === "prompt")
      return [{ path: "/tokenize", body: { model, content: input.prompt, add_special: true } }];
    return [
      { path: "/apply-template", body: { model, messages: input.messages } },
      { path: "/tokenize", body: { model, add_special: true } }, // content: the rendered prompt
    ];
  }
  if (input.kind === "prompt") return [{ path: "/tokenize", body: { model, prompt: input.prompt } }];
  if (engine === "sglang") return undefined; // raw text only: it would miss the chat template
  return [
    {
      path: "/tokenize",
      body: {
        model,
        messages: input.messages,
        add_generation_prompt: true,
        ...(input.tools ? { tools: input.tools } : {}),
      },
    },
  ];
}

/** The cache key of one count: the engine's endpoint, model and the exact request. */
export function tokenizeKey(endpoint: string, model: string, input: TokenizeInput): string {
  return createHash("sha256")
    .update(endpoint)
    .update("\0")
    .update(model)
    .update("\0")
    .update(JSON.stringify(input))
    .digest("hex");
}

function readCount(v: unknown): ExactCount | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as { count?: unknown; tokens?: unknown; max_model_len?: unknown };
  const tokens =
    typeof o.count === "number" && Number.isSafeInteger(o.count) && o.count >= 0
      ? o.count
      : Array.isArray(o.tokens)
        ? o.tokens.length
        : undefined;
  if (tokens === undefined) return undefined;
  const limit = typeof o.max_model_len === "number" && o.max_model_len > 0 ? o.max_model_len : undefined;
  return { tokens, ...(limit ? { limit } : {}) };
}

/** Asks the engine; undefined on any failure (the estimate decides). Never throws. */
export async function askEngineCount(
  dispatcher: Dispatcher,
  endpoint: string,
  requests: { path: string; body: Record<string, unknown> }[],
  signal: AbortSignal,
  timeoutMs = TOKENIZE_TIMEOUT_MS,
): Promise<ExactCount | undefined> {
  const base = new URL(endpoint);
  const prefix = base.pathname.replace(/\/+$/, "");
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
  try {
    let rendered: string | undefined;
    let answer: unknown;
    for (const r of requests) {
      const body = rendered !== undefined ? { ...r.body, content: rendered } : r.body;
      const res = await dispatcher.request({
        origin: base.origin,
        path: `${prefix}${r.path}`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: deadline,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return undefined;
      }
      answer = await res.body.json();
      if (r.path === "/apply-template") {
        const p = (answer as { prompt?: unknown } | null)?.prompt;
        if (typeof p !== "string") return undefined;
        rendered = p;
      }
    }
    return readCount(answer);
  } catch {
    return undefined;
  }
}
