// `kubemoot-scheduler demo` as a real process for 20 s (stdout not a TTY): it exits 0, and what
// it printed shows placements on both GPUs, at least one cold load and one warm reuse. With
// `--fleet mixed` one card is an Ollama and the other a vLLM server: both take calls.
import { spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { assertBuilt, repoRoot } from "../helpers/sidecar-process.js";

/** Runs the demo as a process; resolves with its exit code and everything it printed. */
async function demo(...args: string[]): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, [path.join(repoRoot, "bin/kubemoot-scheduler.js"), "demo", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout.on("data", (d) => {
    out += d;
  });
  proc.stderr.on("data", (d) => {
    out += d;
  });
  const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
  return { code, out };
}

it("runs for its duration, places on both GPUs, loads cold and reuses warm, and exits 0", async () => {
  assertBuilt();
  const { code, out } = await demo("--duration", "20", "--speed", "20", "--seed", "7");
  expect(code, out).toBe(0);
  const summary = /summary: calls (\d+), ok (\d+) \(([^)]*)\), cold loads (\d+), warm (\d+)/.exec(out);
  expect(summary, out).not.toBeNull();
  const [, , ok, byProvider, cold, warm] = summary!;
  expect(Number(ok)).toBeGreaterThan(0);
  expect(byProvider).toMatch(/ollama-a \d+/);
  expect(byProvider).toMatch(/ollama-b \d+/);
  expect(Number(cold)).toBeGreaterThanOrEqual(1);
  expect(Number(warm)).toBeGreaterThanOrEqual(1);
  // Per-call lines (not a TTY) name the provider and whether the model was cold or warm.
  expect(out).toMatch(/→ ollama-a\s+cold/);
  expect(out).toMatch(/→ ollama-b\s+(cold|warm)/);
  // The periodic status line shows the cards.
  expect(out).toMatch(/\[\d+s\] ollama-a: /);
}, 60_000);

it("--fleet mixed: an Ollama card and a vLLM card both take the crew's calls", async () => {
  assertBuilt();
  const { code, out } = await demo("--fleet", "mixed", "--duration", "15", "--speed", "20", "--seed", "7");
  expect(code, out).toBe(0);
  expect(out).toMatch(/GPUs ollama-a \(RTX 5090, ollama\) and vllm-b \(L40S, vllm\)/);
  const summary = /summary: calls (\d+), ok (\d+) \(([^)]*)\)/.exec(out);
  expect(summary, out).not.toBeNull();
  const [, , ok, byProvider] = summary!;
  expect(Number(ok)).toBeGreaterThan(0);
  expect(byProvider).toMatch(/ollama-a \d+/);
  expect(byProvider).toMatch(/vllm-b \d+/);
  // The crew speaks the Ollama API; on the vLLM card the proxy translates, and it is always warm.
  expect(out).toMatch(/→ vllm-b\s+warm/);
  expect(out).toMatch(/→ ollama-a\s+(cold|warm)/);
  // The status line shows the vLLM card's running and waiting requests and its KV cache.
  expect(out).toMatch(/vllm-b: qwen3:14b\(run \d+, wait \d+, kv \d+\.\d%\)/);
}, 60_000);

it("--fleet real: a real llama.cpp on the CPU beside the Ollama card takes the crew's calls, and stops with the demo", async () => {
  assertBuilt();
  const { code, out } = await demo("--fleet", "real", "--duration", "15", "--speed", "20", "--seed", "7");
  expect(code, out).toBe(0);
  expect(out).toMatch(/GPUs ollama-a \(RTX 5090, ollama\) and llama-real \(CPU, llamacpp\)/);
  const summary = /summary: calls (\d+), ok (\d+) \(([^)]*)\)/.exec(out);
  expect(summary, out).not.toBeNull();
  expect(summary![3]).toMatch(/llama-real \d+/);
  // The crew speaks the Ollama API; on llama.cpp the proxy translates, and it is always warm.
  expect(out).toMatch(/→ llama-real\s+warm/);
  // The status line shows the real card's running and waiting requests.
  expect(out).toMatch(/llama-real: kubemoot-tiny\(run \d+, wait \d+\)/);
  // The engine was a child process; none is left once the demo has exited.
  const left = spawnSync("pgrep", [
    "-f",
    "kubemoot-scheduler.js engine --listen 127.0.0.1:0 --models .*kubemoot-demo-",
  ]);
  expect(left.stdout.toString()).toBe("");
}, 60_000);

it("refuses an unknown --fleet with exit 2, naming the flag and the fleets there are", async () => {
  assertBuilt();
  const { code, out } = await demo("--fleet", "nope", "--duration", "1");
  expect(code, out).toBe(2);
  expect(out).toContain('--fleet: expected one of prod, mixed, real, got "nope"');
});
