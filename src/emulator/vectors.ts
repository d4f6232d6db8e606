// Deterministic embedding vectors. A vector is a function of (model, text) only, never of the
// emulator's seed or of which emulator answers, as two GPUs serving one model agree.
//
// Each word (lower-cased run of letters or digits) adds ±1 to 8 dimensions picked by a PRNG
// seeded with the hash of (model, word) (feature hashing), and the whole text adds a small
// dense Gaussian part seeded with the hash of (model, text), so every text has its own vector
// and texts sharing words are closer in cosine than texts that share none. The result is
// L2-normalised, like Ollama's /api/embed. Cost: O(words × 8 + dims) per text.
import { mulberry32, Rng } from "../prng/index.js";
import { hash32 } from "./tokenizer.js";

const FEATURES_PER_WORD = 8;
/** Standard deviation of the dense part: small beside a word's ±1s, so words dominate. */
const DENSE_SD = 0.05;
const WORD = /[\p{L}\p{N}]+/gu;

export function embedVector(model: string, text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  const dense = new Rng(hash32(`${model}\n${text}`));
  for (let i = 0; i < dims; i++) v[i] = DENSE_SD * dense.normal();
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    const r = mulberry32(hash32(`${model}\n${word}`));
    for (let k = 0; k < FEATURES_PER_WORD; k++) {
      const idx = Math.floor(r() * dims);
      v[idx] = (v[idx] as number) + (r() < 0.5 ? -1 : 1);
    }
  }
  return normalize(v);
}

/** Scales to unit length; values rounded to 8 significant digits (float32 precision). */
export function normalize(v: number[]): number[] {
  let sum = 0;
  for (const x of v) sum += x * x;
  const scale = 1 / Math.max(Math.sqrt(sum), 1e-12);
  return v.map((x) => Number((x * scale).toPrecision(8)));
}

/** Ollama's `dimensions`: keep the first n values and normalise again. */
export function shorten(v: number[], dimensions: number | undefined): number[] {
  if (dimensions === undefined || dimensions <= 0 || dimensions >= v.length) return v;
  return normalize(v.slice(0, dimensions));
}

/** OpenAI's encoding_format "base64": little-endian float32s, base64-encoded. */
export function toBase64(v: number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => {
    buf.writeFloatLE(x, i * 4);
  });
  return buf.toString("base64");
}
