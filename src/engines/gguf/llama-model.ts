// A seeded llama-architecture model as GGUF (docs/rules/engines.md "A generated model"): random
// weights, a SentencePiece-style vocabulary, and exactly the metadata llama.cpp needs to load
// and run it. Deterministic for a seed; sizes come from a preset, so a bench can make a model
// whose prefill costs real time. The output row of every control token (EOS included) is zero
// while the others are random, so greedy decoding never picks one and runs to max_tokens.
import { Rng } from "../../prng/index.js";
import { GGML_F16, GGML_F32, type MetaValue, type TensorSpec, writeGguf } from "./gguf-file.js";
import { BOS_ID, EOS_ID, spmVocab, TOKEN_CONTROL, TOKEN_UNKNOWN, UNK_ID, type Vocab } from "./spm-vocab.js";

export interface LlamaShape {
  vocab: number;
  /** n_embd: the width of every hidden state. */
  embd: number;
  layers: number;
  /** The feed-forward width. */
  ff: number;
  heads: number;
  kvHeads: number;
  /** The context it was "trained" for (llama.context_length): what the engine may serve. */
  context: number;
  type: "f32" | "f16";
}

export const GGUF_PRESETS = {
  /** ~0.6 MB: loads and answers in well under a second. */
  tiny: { vocab: 512, embd: 64, layers: 2, ff: 128, heads: 4, kvHeads: 4, context: 2048, type: "f32" },
  /** ~100 MB: prefill and decoding cost real time (the benches). */
  bench: { vocab: 4096, embd: 768, layers: 6, ff: 2048, heads: 12, kvHeads: 12, context: 4096, type: "f16" },
} as const satisfies Record<string, LlamaShape>;

export type GgufPreset = keyof typeof GGUF_PRESETS;

/** A ChatML-style template, so chat requests render as with many real models. */
const CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function metadata(shape: LlamaShape, v: Vocab, name: string): Map<string, MetaValue> {
  const headDim = shape.embd / shape.heads;
  // llama.cpp's loader requires the architecture and its hyperparameters (llama.*), and the
  // tokenizer's model, tokens, scores and types; BOS/EOS/UNK name the special tokens it adds
  // and stops on. The rest (rope, file type, chat template) it defaults, but real models carry
  // them, so readers see a familiar file.
  return new Map<string, MetaValue>([
    ["general.architecture", { string: "llama" }],
    ["general.name", { string: name }],
    ["general.alignment", { u32: 32 }],
    ["general.file_type", { u32: shape.type === "f16" ? 1 : 0 }],
    ["llama.context_length", { u32: shape.context }],
    ["llama.embedding_length", { u32: shape.embd }],
    ["llama.block_count", { u32: shape.layers }],
    ["llama.feed_forward_length", { u32: shape.ff }],
    ["llama.attention.head_count", { u32: shape.heads }],
    ["llama.attention.head_count_kv", { u32: shape.kvHeads }],
    ["llama.attention.layer_norm_rms_epsilon", { f32: 1e-5 }],
    ["llama.rope.dimension_count", { u32: headDim }],
    ["llama.rope.freq_base", { f32: 10000 }],
    ["llama.vocab_size", { u32: shape.vocab }],
    ["tokenizer.ggml.model", { string: "llama" }],
    ["tokenizer.ggml.tokens", { strings: v.tokens }],
    ["tokenizer.ggml.scores", { f32s: v.scores }],
    ["tokenizer.ggml.token_type", { i32s: v.types }],
    ["tokenizer.ggml.bos_token_id", { u32: BOS_ID }],
    ["tokenizer.ggml.eos_token_id", { u32: EOS_ID }],
    ["tokenizer.ggml.unknown_token_id", { u32: UNK_ID }],
    ["tokenizer.ggml.add_bos_token", { bool: true }],
    ["tokenizer.ggml.add_eos_token", { bool: false }],
    ["tokenizer.chat_template", { string: CHAT_TEMPLATE }],
  ]);
}

function tensors(shape: LlamaShape, types: Int32Array, rng: Rng): TensorSpec[] {
  const wt = shape.type === "f16" ? GGML_F16 : GGML_F32;
  const kvWidth = (shape.embd / shape.heads) * shape.kvHeads;
  // Each tensor draws from a stream of its own, so one tensor's values do not depend on the others'.
  const random = (name: string, dims: number[], scale: number): TensorSpec => ({
    name,
    dims,
    type: wt,
    fill: (out) => {
      const r = rng.fork(name);
      for (let i = 0; i < out.length; i++) out[i] = (r.float() * 2 - 1) * scale;
    },
  });
  // Norms are F32 whatever the weights (llama.cpp multiplies by them in F32).
  const ones = (name: string): TensorSpec => ({
    name,
    dims: [shape.embd],
    type: GGML_F32,
    fill: (o) => o.fill(1),
  });
  const s = 1 / Math.sqrt(shape.embd);
  const out: TensorSpec[] = [random("token_embd.weight", [shape.embd, shape.vocab], 1)];
  for (let l = 0; l < shape.layers; l++) {
    const b = `blk.${l}`;
    out.push(
      ones(`${b}.attn_norm.weight`),
      random(`${b}.attn_q.weight`, [shape.embd, shape.embd], s),
      random(`${b}.attn_k.weight`, [shape.embd, kvWidth], s),
      random(`${b}.attn_v.weight`, [shape.embd, kvWidth], s),
      random(`${b}.attn_output.weight`, [shape.embd, shape.embd], s),
      ones(`${b}.ffn_norm.weight`),
      random(`${b}.ffn_gate.weight`, [shape.embd, shape.ff], s),
      random(`${b}.ffn_up.weight`, [shape.embd, shape.ff], s),
      random(`${b}.ffn_down.weight`, [shape.ff, shape.embd], 1 / Math.sqrt(shape.ff)),
    );
  }
  out.push(ones("output_norm.weight"));
  const output = random("output.weight", [shape.embd, shape.vocab], s);
  out.push({
    ...output,
    fill: (o) => {
      output.fill(o);
      // Control and unknown tokens get a zero row: a logit of 0 against the max of hundreds
      // of random ones, so greedy decoding never ends (or emits one) before max_tokens.
      for (let t = 0; t < shape.vocab; t++) {
        if (types[t] === TOKEN_CONTROL || types[t] === TOKEN_UNKNOWN)
          o.fill(0, t * shape.embd, (t + 1) * shape.embd);
      }
    },
  });
  return out;
}

export interface GeneratedModel {
  file: string;
  bytes: number;
  shape: LlamaShape;
  seed: number;
}

/** Writes the model of `preset` (or a shape of its own) seeded with `seed` to `file`. */
export function writeLlamaGguf(
  file: string,
  options: { seed?: number; preset?: GgufPreset; shape?: LlamaShape } = {},
): GeneratedModel {
  const seed = options.seed ?? 1;
  const preset = options.preset ?? "tiny";
  const shape: LlamaShape = options.shape ?? GGUF_PRESETS[preset];
  if (shape.embd % shape.heads !== 0 || shape.heads % shape.kvHeads !== 0) {
    throw new Error("gguf: the width must split into the heads, and the heads into the KV heads");
  }
  const vocab = spmVocab(shape.vocab);
  const bytes = writeGguf(
    file,
    metadata(shape, vocab, `kubemoot-${preset}-seed${seed}`),
    tensors(shape, vocab.types, new Rng(seed)),
  );
  return { file, bytes, shape, seed };
}
