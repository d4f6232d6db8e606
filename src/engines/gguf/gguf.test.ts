// The generated model read back with a maintained GGUF reader (@huggingface/gguf): the metadata
// llama.cpp needs, every tensor's shape and type, a zero output row for the control tokens,
// the same bytes for the same seed (docs/rules/engines.md "A generated model").
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GGMLQuantizationType, gguf } from "@huggingface/gguf";
import { afterAll, describe, expect, it } from "vitest";
import { toF16 } from "./gguf-file.js";
import { GGUF_PRESETS, writeLlamaGguf } from "./llama-model.js";

const dir = mkdtempSync(path.join(tmpdir(), "kubemoot-gguf-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the generated llama model", () => {
  const file = path.join(dir, "tiny.gguf");
  const written = writeLlamaGguf(file, { seed: 7 });

  it("carries the metadata llama.cpp loads a llama model and its tokenizer by", async () => {
    const metadata = (await gguf(file, { allowLocalFile: true })).metadata as unknown as Record<
      string,
      unknown
    >;
    const t = GGUF_PRESETS.tiny;
    expect(metadata).toMatchObject({
      version: 3,
      "general.architecture": "llama",
      "llama.context_length": t.context,
      "llama.embedding_length": t.embd,
      "llama.block_count": t.layers,
      "llama.feed_forward_length": t.ff,
      "llama.attention.head_count": t.heads,
      "llama.attention.head_count_kv": t.kvHeads,
      "tokenizer.ggml.model": "llama",
      "tokenizer.ggml.bos_token_id": 1,
      "tokenizer.ggml.eos_token_id": 2,
    });
    const tokens = metadata["tokenizer.ggml.tokens"] as string[];
    expect(tokens).toHaveLength(t.vocab);
    expect(tokens.slice(0, 4)).toEqual(["<unk>", "<s>", "</s>", "<0x00>"]);
    expect(tokens[258]).toBe("<0xFF>");
    expect(new Set(tokens).size).toBe(t.vocab);
    expect(metadata["tokenizer.ggml.scores"]).toHaveLength(t.vocab);
    expect(metadata["tokenizer.ggml.token_type"]).toHaveLength(t.vocab);
  });

  it("has every llama tensor with its shape, norms in F32, and about the preset's size", async () => {
    const { tensorInfos } = await gguf(file, { allowLocalFile: true });
    const t = GGUF_PRESETS.tiny;
    const byName = new Map(tensorInfos.map((x) => [x.name, x]));
    expect(tensorInfos).toHaveLength(3 + 9 * t.layers);
    expect(byName.get("token_embd.weight")?.shape).toEqual([BigInt(t.embd), BigInt(t.vocab)]);
    expect(byName.get("blk.1.ffn_down.weight")?.shape).toEqual([BigInt(t.ff), BigInt(t.embd)]);
    expect(byName.get("blk.0.attn_norm.weight")?.dtype).toBe(GGMLQuantizationType.F32);
    expect(written.bytes).toBeGreaterThan(500_000);
    expect(written.bytes).toBeLessThan(1_000_000);
  });

  it("gives the control tokens a zero output row and the others random weights", async () => {
    const parsed = await gguf(file, { allowLocalFile: true });
    const out = parsed.tensorInfos.find((x) => x.name === "output.weight")!;
    const bytes = readFileSync(file);
    const base = Number(parsed.tensorDataOffset) + Number(out.offset);
    const row = (token: number) =>
      new Float32Array(
        bytes.buffer.slice(
          bytes.byteOffset + base + token * 64 * 4,
          bytes.byteOffset + base + (token + 1) * 64 * 4,
        ),
      );
    expect([...row(2)].every((x) => x === 0)).toBe(true);
    expect([...row(1)].every((x) => x === 0)).toBe(true);
    expect([...row(300)].filter((x) => x !== 0).length).toBe(64);
  });

  it("is the same file for the same seed, and another for another", () => {
    const again = path.join(dir, "again.gguf");
    const other = path.join(dir, "other.gguf");
    writeLlamaGguf(again, { seed: 7 });
    writeLlamaGguf(other, { seed: 8 });
    expect(readFileSync(again).equals(readFileSync(file))).toBe(true);
    expect(readFileSync(other).equals(readFileSync(file))).toBe(false);
  });

  it("writes F16 weights when asked (half precision, rounded to nearest)", async () => {
    const f16 = path.join(dir, "f16.gguf");
    writeLlamaGguf(f16, { seed: 1, shape: { ...GGUF_PRESETS.tiny, type: "f16" } });
    const { tensorInfos } = await gguf(f16, { allowLocalFile: true });
    expect(tensorInfos.find((x) => x.name === "blk.0.attn_q.weight")?.dtype).toBe(GGMLQuantizationType.F16);
    expect(tensorInfos.find((x) => x.name === "output_norm.weight")?.dtype).toBe(GGMLQuantizationType.F32);
    // 1 + 1.75, 1.5 and 0.5 units in the last place: up, a tie to even (up), a tie to even (down).
    const ulp = 2 ** -10;
    const xs = [1, -2, 0.5, 65504, 0, 1 / 3, 2 ** -24, 1 + 1.75 * ulp, 1 + 1.5 * ulp, 1 + 0.5 * ulp];
    const h = toF16(Float32Array.from(xs));
    expect([...new Uint16Array(h.buffer, h.byteOffset, xs.length)]).toEqual([
      0x3c00, 0xc000, 0x3800, 0x7bff, 0, 0x3555, 1, 0x3c02, 0x3c02, 0x3c00,
    ]);
  });
});
