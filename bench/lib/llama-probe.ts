// Instrumentation, run as a process of its own (test/engines/gguf-llama.test.ts): loads a
// GGUF in a real llama.cpp (node-llama-cpp, CPU, one thread), decodes a prompt greedily twice,
// and prints one JSON line: the model's training context, the prompt's token count, both token
// sequences and the EOS token. A model llama.cpp cannot take may abort this process, never the
// runner that started it.
// Usage: node dist/bench/lib/llama-probe.js <model.gguf> [max-tokens]
import { getLlama } from "node-llama-cpp";

const [file, max = "24"] = process.argv.slice(2);
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never });
const model = await llama.loadModel({ modelPath: file! });
const context = await model.createContext({ contextSize: 512, sequences: 1, threads: 1 });
const prompt = model.tokenize("the quick brown fox jumps over the lazy dog");
async function greedy(): Promise<number[]> {
  const seq = context.getSequence();
  const out: number[] = [];
  for await (const t of seq.evaluate(prompt, { temperature: 0 })) if (out.push(t) >= Number(max)) break;
  seq.dispose();
  return out;
}
const a = await greedy();
const b = await greedy();
process.stdout.write(
  `${JSON.stringify({ train: model.trainContextSize, prompt: prompt.length, a, b, eos: model.tokens.eos })}\n`,
);
await context.dispose();
await model.dispose();
await llama.dispose();
