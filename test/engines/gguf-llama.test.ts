// The generated model on a real llama.cpp (node-llama-cpp, CPU, one thread), in a child
// process of its own (bench/lib/llama-probe.ts): a model llama.cpp cannot take may abort inside ggml, and must not take
// the test runner with it (docs/rules/engines.md "A generated model"). It loads with the
// preset's context, tokenizes, and greedy decoding runs to max_tokens, the same tokens twice.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { repoRoot } from "../../src/repo-root.js";
import { assertBuilt } from "../helpers/sidecar-process.js";

const run = promisify(execFile);
const ROOT = repoRoot();
const dir = mkdtempSync(path.join(tmpdir(), "kubemoot-gguf-llama-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("loads in llama.cpp and decodes greedily to max_tokens, the same tokens each time", async () => {
  assertBuilt();
  const file = path.join(dir, "tiny.gguf");
  await run(process.execPath, [
    path.join(ROOT, "bin", "kubemoot-scheduler.js"),
    "gguf",
    "--out",
    file,
    "--seed",
    "3",
  ]);
  const { stdout } = await run(process.execPath, [path.join(ROOT, "dist/bench/lib/llama-probe.js"), file], {
    cwd: ROOT,
    timeout: 60_000,
  });
  const r = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
    train: number;
    prompt: number;
    a: number[];
    b: number[];
    eos: number;
  };
  expect(r.train).toBe(2048);
  expect(r.prompt).toBeGreaterThan(5);
  expect(r.a).toHaveLength(24);
  expect(r.a).not.toContain(r.eos);
  expect(r.b).toEqual(r.a);
}, 90_000);
