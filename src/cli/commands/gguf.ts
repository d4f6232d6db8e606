import { GGUF_PRESETS, type GgufPreset, writeLlamaGguf } from "../../engines/index.js";
import { invalidArgument } from "../../errors/index.js";
import type { Command } from "../command.js";

// Writes a seeded llama-architecture model (docs/rules/engines.md "A generated model"), for a
// real llama.cpp engine to serve in tests, benches and the demo: no download, the same bytes
// for the same seed.
export const command: Command = {
  name: "gguf",
  summary: "write a seeded llama-architecture GGUF model (random weights) for a real llama.cpp",
  details: [
    "Writes a GGUF v3 file of the llama architecture with random weights drawn from --seed and",
    "a SentencePiece-style vocabulary with byte tokens, which llama.cpp loads and runs. Its",
    "output is noise, but its tokenizer, context length and costs are a real engine's; greedy",
    "decoding never emits the end-of-sequence token, so it runs to max_tokens.",
    "",
    `Presets: tiny (the default; ${describe("tiny")}), bench (${describe("bench")}).`,
    "",
    "Exit status: 0 when written; 2 when a flag is invalid.",
    "",
    "Examples:",
    "  kubemoot-scheduler gguf --out models/tiny.gguf",
    "  kubemoot-scheduler gguf --out models/bench.gguf --preset bench --seed 7",
  ].join("\n"),
  flags: {
    out: { type: "string", description: "the file to write", value: "FILE" },
    seed: {
      type: "string",
      description: "the weights' seed, a non-negative integer (default 1)",
      value: "N",
    },
    preset: { type: "string", description: "the model's size: tiny or bench (default tiny)", value: "NAME" },
  },
  run: async (flags) => {
    const out = flags.out;
    if (typeof out !== "string" || out === "")
      throw invalidArgument("--out", "the file to write is required");
    const seed = flags.seed === undefined ? 1 : Number(flags.seed);
    if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw invalidArgument(
        "--seed",
        `expected an integer from 0 to 4294967295, got "${String(flags.seed)}"`,
      );
    }
    const preset = (flags.preset ?? "tiny") as string;
    if (!Object.hasOwn(GGUF_PRESETS, preset)) {
      throw invalidArgument("--preset", `expected tiny or bench, got "${preset}"`);
    }
    let m: ReturnType<typeof writeLlamaGguf>;
    try {
      m = writeLlamaGguf(out, { seed, preset: preset as GgufPreset });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (typeof code === "string") throw invalidArgument("--out", `cannot write "${out}" (${code})`);
      throw err;
    }
    process.stdout.write(`wrote ${m.file}: ${m.bytes} bytes, seed ${m.seed}, preset ${preset}\n`);
    return 0;
  },
};

function describe(p: GgufPreset): string {
  const s = GGUF_PRESETS[p];
  return `vocabulary ${s.vocab}, width ${s.embd}, ${s.layers} layers, context ${s.context}, ${s.type.toUpperCase()}`;
}
