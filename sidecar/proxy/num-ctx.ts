// The num_ctx policy. Ollama reloads a loaded model whenever a request's num_ctx differs from
// the one it was loaded with (docs/rules/ollama.md), so callers that mix values thrash the GPU.
//
// "pin" (default): the forwarded num_ctx is the placement's context — the model's loaded
//   context when it is resident, else the provider's configured per-request context — whatever
//   the caller sent, so every proxied call to a copy uses the same value and never reloads it.
//   A caller that asked for MORE than that context, and whose prompt plus requested output
//   (options.num_predict) does not fit in it, is refused (413) rather than given a reload or a
//   silent cut. When the context is unknown, the caller's value (or none) is passed on as is.
// "pass": the caller's num_ctx is forwarded untouched (thrash is the caller's choice), but a
//   num_ctx smaller than the estimated prompt is refused (413): the engine would cut it silently.
//
// OpenAI requests cannot carry num_ctx: they run at the provider's configured context, so the
// prompt must fit that (checked here too).

export type NumCtxPolicy = "pin" | "pass";

export interface NumCtxInput {
  policy: NumCtxPolicy;
  /** The caller's options.num_ctx (> 0), if any. */
  callerNumCtx: number | undefined;
  /** Context the placement gives (loaded context, else configured); 0 = unknown. */
  contextLength: number;
  /** Estimated prompt tokens. */
  promptTokens: number;
  /** Requested output tokens (num_predict > 0), 0 = not said. */
  outputTokens: number;
}

export type NumCtxDecision =
  /** Forward options.num_ctx = value. */
  | { kind: "set"; value: number }
  /** Forward the caller's options untouched (value may be undefined: none sent). */
  | { kind: "keep"; value: number | undefined }
  | { kind: "refuse"; message: string; largestContext: number };

export function decideNumCtx(i: NumCtxInput): NumCtxDecision {
  if (i.policy === "pass") {
    if (i.callerNumCtx !== undefined && i.promptTokens > i.callerNumCtx) {
      return {
        kind: "refuse",
        message: `options.num_ctx ${i.callerNumCtx} cannot hold the prompt (about ${i.promptTokens} tokens); the engine would cut it silently. Raise num_ctx or send less.`,
        largestContext: i.callerNumCtx,
      };
    }
    return { kind: "keep", value: i.callerNumCtx };
  }
  if (!(i.contextLength > 0)) return { kind: "keep", value: i.callerNumCtx };
  const need = i.promptTokens + Math.max(0, i.outputTokens);
  if (i.callerNumCtx !== undefined && i.callerNumCtx > i.contextLength && need > i.contextLength) {
    return {
      kind: "refuse",
      message: `options.num_ctx ${i.callerNumCtx} asks for more context than the placed copy has (${i.contextLength} tokens), and the prompt (about ${i.promptTokens} tokens) plus the requested output (${i.outputTokens}) needs it; reloading the model with a larger context would disturb every other caller. Raise the provider's per-request context or send less.`,
      largestContext: i.contextLength,
    };
  }
  return { kind: "set", value: i.contextLength };
}

/** Applies a decision to an Ollama body (mutates it). */
export function applyNumCtx(body: Record<string, unknown>, d: NumCtxDecision): void {
  if (d.kind !== "set") return;
  const opts = body.options;
  if (typeof opts === "object" && opts !== null && !Array.isArray(opts)) {
    (opts as Record<string, unknown>).num_ctx = d.value;
  } else {
    body.options = { num_ctx: d.value };
  }
}
