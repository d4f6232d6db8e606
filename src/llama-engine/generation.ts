// One generation in one slot (docs/rules/engines.md "A real llama.cpp engine"), the way
// llama-server runs a task: the prefix the slot already holds is reused (cache_prompt) and only
// the rest of the prompt is evaluated, always at least its last token so there are logits to
// sample from; tokens are sampled and evaluated by llama.cpp (node-llama-cpp's
// sequence.evaluate), so every count is exact. It stops at n_predict, at a stop word, at the
// end-of-generation token, or when the slot's context is full — never by shifting the context,
// which would drop the prompt's beginning silently.
import type { LlamaContextSequence, LlamaModel, SequenceEvaluateOptions, Token } from "node-llama-cpp";
import type { GenerationParams, Sampling } from "./request-params.js";
import { commonPrefix, type Slot } from "./slot-pool.js";
import { StopMatcher } from "./stop-strings.js";
import { TokenText } from "./token-text.js";

export type StopType = "none" | "eos" | "limit" | "word";

export interface GenerationOutput {
  /** The generated text, without the stop word. */
  content: string;
  tokens: Token[];
  stopType: StopType;
  stoppingWord: string;
  /** The slot's context ran out before n_predict or the end of generation. */
  truncated: boolean;
  hasNewLine: boolean;
  /** Prompt tokens in all; reused from the slot's cache; evaluated now. */
  nPrompt: number;
  cacheN: number;
  promptN: number;
  predictedN: number;
  promptMs: number;
  predictedMs: number;
  /** Tokens the slot's cache holds afterwards. */
  tokensCached: number;
}

/** Receives each piece of text as it is released; a returned promise holds generation (backpressure). */
export type OnPiece = (text: string, tokens: readonly Token[]) => void | Promise<void>;

export interface GenerationInput {
  model: LlamaModel;
  slot: Slot<LlamaContextSequence>;
  prompt: readonly Token[];
  /** The slot's context (tokens): the prompt and everything generated must fit it. */
  nCtx: number;
  params: GenerationParams;
  signal: AbortSignal;
}

/** The last `n` tokens of the prompt and what followed it (all of them for n < 0), copying only those. */
export function lastTokens(prompt: readonly Token[], generated: readonly Token[], n: number): Token[] {
  if (n < 0) return [...prompt, ...generated];
  if (generated.length >= n) return generated.slice(generated.length - n);
  return [...prompt.slice(Math.max(0, prompt.length - (n - generated.length))), ...generated];
}

function evaluateOptions(s: Sampling, history: (n: number) => Token[]): SequenceEvaluateOptions {
  const penalize = s.repeatPenalty !== 1 || s.presencePenalty !== 0 || s.frequencyPenalty !== 0;
  const lastN = s.repeatLastN;
  return {
    temperature: s.temperature,
    topK: s.topK,
    topP: s.topP,
    minP: s.minP,
    seed: s.seed,
    yieldEogToken: true,
    ...(penalize && lastN !== 0
      ? {
          repeatPenalty: {
            // Asked for at every token: only the tokens it punishes are copied.
            punishTokens: () => history(lastN),
            ...(lastN > 0 ? { maxPunishTokens: lastN } : {}),
            penalty: s.repeatPenalty,
            presencePenalty: s.presencePenalty,
            frequencyPenalty: s.frequencyPenalty,
          },
        }
      : {}),
  };
}

/** The prompt tokens the slot's cache already holds and this request may reuse. */
function reusableTokens(cached: readonly Token[], prompt: readonly Token[], cachePrompt: boolean): number {
  if (!cachePrompt || prompt.length === 0) return 0;
  return Math.min(commonPrefix(cached, prompt), prompt.length - 1);
}

export async function generate(input: GenerationInput, onPiece: OnPiece): Promise<GenerationOutput> {
  const { model, slot, prompt, nCtx, params, signal } = input;
  const seq = slot.sequence;
  const cacheN = reusableTokens(seq.contextTokens, prompt, params.cachePrompt);
  if (seq.nextTokenIndex > cacheN) {
    await seq.eraseContextTokenRanges([{ start: cacheN, end: seq.nextTokenIndex }]);
  }
  const toEvaluate = prompt.slice(cacheN);
  const room = nCtx - prompt.length;
  const want = params.nPredict < 0 ? room : Math.min(params.nPredict, room);
  const byContext = params.nPredict < 0 || params.nPredict > room;
  const out: GenerationOutput = {
    content: "",
    tokens: [],
    stopType: "none",
    stoppingWord: "",
    truncated: false,
    hasNewLine: false,
    nPrompt: prompt.length,
    cacheN,
    promptN: toEvaluate.length,
    predictedN: 0,
    promptMs: 0,
    predictedMs: 0,
    tokensCached: 0,
  };
  const emit = async (text: string, tokens: readonly Token[]) => {
    if (text === "") return;
    out.content += text;
    if (text.includes("\n")) out.hasNewLine = true;
    await onPiece(text, tokens);
  };
  const started = performance.now();
  if (want <= 0) {
    await seq.evaluateWithoutGeneratingNewTokens(toEvaluate);
    out.promptMs = performance.now() - started;
    out.stopType = "limit";
    out.truncated = byContext && params.nPredict !== 0;
    out.tokensCached = seq.nextTokenIndex;
    return out;
  }
  const text = new TokenText((tokens, last) => model.detokenize(tokens, false, last));
  const stops = new StopMatcher(params.stop);
  const history = (n: number) => lastTokens(prompt, out.tokens, n);
  let firstAt = 0;
  try {
    for await (const token of seq.evaluate(toEvaluate, evaluateOptions(params.sampling, history))) {
      if (firstAt === 0) {
        firstAt = performance.now();
        out.promptMs = firstAt - started;
      }
      if (signal.aborted) break;
      if (model.isEogToken(token)) {
        out.stopType = "eos";
        break;
      }
      out.tokens.push(token);
      out.predictedN++;
      const piece = stops.push(text.push(token));
      await emit(piece.emit, [token]);
      if (piece.word !== undefined) {
        out.stopType = "word";
        out.stoppingWord = piece.word;
        break;
      }
      if (out.predictedN >= want) {
        out.stopType = "limit";
        out.truncated = byContext;
        break;
      }
    }
  } catch (err) {
    // A failed evaluation leaves the slot's cache in no known state: start it afresh.
    await seq.clearHistory().catch(() => undefined);
    throw err;
  }
  if (out.stopType !== "word") {
    const tail = stops.push(text.flush());
    if (tail.word !== undefined) {
      out.stopType = "word";
      out.stoppingWord = tail.word;
    }
    await emit(tail.emit + (tail.word === undefined ? stops.flush() : ""), []);
  }
  out.predictedMs = firstAt === 0 ? 0 : performance.now() - firstAt;
  out.tokensCached = seq.nextTokenIndex;
  return out;
}
