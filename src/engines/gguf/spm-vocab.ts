// A SentencePiece-style vocabulary for the generated model (docs/rules/engines.md "A generated
// model"): `<unk>`, `<s>`, `</s>`, the 256 byte tokens `<0x00>`…`<0xFF>` (so any text
// tokenizes: what no piece covers falls back to bytes), then pieces spelled with `▁` for a
// leading space, scored so that earlier (shorter, commoner) pieces merge first. The same list
// for every seed: only the weights are random.

/** llama.cpp's token types (tokenizer.ggml.token_type). */
export const TOKEN_NORMAL = 1;
export const TOKEN_UNKNOWN = 2;
export const TOKEN_CONTROL = 3;
export const TOKEN_BYTE = 6;

export const UNK_ID = 0;
export const BOS_ID = 1;
export const EOS_ID = 2;

export interface Vocab {
  tokens: string[];
  scores: Float32Array;
  types: Int32Array;
}

const WORDS =
  "the of and to in is it you that he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part".split(
    " ",
  );
const LETTERS = "abcdefghijklmnopqrstuvwxyz";
const OTHERS = "0123456789.,!?;:'\"-()[]{}<>/\\_=+*&%$#@|~`^ABCDEFGHIJKLMNOPQRSTUVWXYZ\n\t";
const SPACE = "\u2581";

/** The vocabulary of `size` tokens (at least 259: the specials and the bytes). */
export function spmVocab(size: number): Vocab {
  if (!Number.isInteger(size) || size < 259) throw new Error(`vocabulary size ${size}: at least 259`);
  const tokens = ["<unk>", "<s>", "</s>"];
  const types = [TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(TOKEN_BYTE);
  }
  const seen = new Set<string>();
  const pieces: string[] = [];
  const add = (p: string) => {
    if (!seen.has(p)) {
      seen.add(p);
      pieces.push(p);
    }
  };
  add(SPACE);
  for (const c of LETTERS) add(c);
  for (const c of OTHERS) add(c);
  for (const c of LETTERS) add(SPACE + c);
  for (const w of WORDS) add(SPACE + w);
  for (const a of LETTERS) for (const b of LETTERS) add(a + b);
  for (const a of LETTERS) for (const b of LETTERS) add(SPACE + a + b);
  for (const w of WORDS) add(w);
  for (const a of LETTERS) for (const b of LETTERS) for (const c of LETTERS) add(a + b + c);
  const room = size - tokens.length;
  if (pieces.length < room)
    throw new Error(`vocabulary size ${size}: at most ${tokens.length + pieces.length}`);
  const scores = new Float32Array(size);
  for (let i = 0; i < room; i++) {
    tokens.push(pieces[i]!);
    types.push(TOKEN_NORMAL);
    scores[tokens.length - 1] = -(i + 1);
  }
  return { tokens, scores, types: Int32Array.from(types) };
}
