// A real llama.cpp engine (`kubemoot-scheduler engine`, node-llama-cpp on the CPU) as a child
// process of its own, over a generated model (docs/rules/engines.md "A generated model"): a model
// llama.cpp cannot take may abort that process, never the test runner. Each engine gets a fresh
// model directory; the same seed gives the same model bytes every time.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GGUF_PRESETS, writeLlamaGguf } from "../../src/engines/index.js";
import { assertBuilt, repoRoot } from "./sidecar-process.js";

const bin = path.join(repoRoot, "bin", "kubemoot-scheduler.js");

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const p of live) p.kill("SIGKILL");
});

export interface LlamaEngineProcess {
  readonly proc: ChildProcess;
  readonly url: string;
  readonly modelsDir: string;
  /** The model ids served (file names without .gguf). */
  readonly models: string[];
  readonly exited: Promise<number | null>;
  output(): string;
  /** SIGTERM (or `signal`), then the exit code; the model directory is removed when `keepModels` is not set. */
  stop(signal?: NodeJS.Signals, keepModels?: boolean): Promise<number | null>;
}

export interface EngineProcessOptions {
  /** Models to write into a fresh directory: id → seed of the tiny preset (or a seed and a training context), default {tiny: 1}. */
  models?: ModelSeeds;
  /** Serve this directory instead of writing models. */
  modelsDir?: string;
  /** Engine flags after --models (e.g. --parallel 2). */
  args?: string[];
  /** Listen address; default 127.0.0.1:0. */
  listen?: string;
  timeoutMs?: number;
}

export type ModelSeeds = Record<string, number | { seed: number; context: number }>;

/** Writes tiny models (each its seed, and its training context when given) into a fresh directory. */
export function writeModels(models: ModelSeeds = { tiny: 1 }): string {
  const dir = mkdtempSync(path.join(tmpdir(), "kubemoot-engine-"));
  mkdirSync(dir, { recursive: true });
  for (const [id, m] of Object.entries(models)) {
    const { seed, context } = typeof m === "number" ? { seed: m, context: GGUF_PRESETS.tiny.context } : m;
    writeLlamaGguf(path.join(dir, `${id}.gguf`), { seed, shape: { ...GGUF_PRESETS.tiny, context } });
  }
  return dir;
}

export async function startLlamaEngineProcess(o: EngineProcessOptions = {}): Promise<LlamaEngineProcess> {
  assertBuilt();
  const modelsDir = o.modelsDir ?? writeModels(o.models);
  const owned = o.modelsDir === undefined;
  const proc = spawn(
    process.execPath,
    [bin, "engine", "--listen", o.listen ?? "127.0.0.1:0", "--models", modelsDir, ...(o.args ?? [])],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  live.add(proc);
  let out = "";
  proc.stdout!.on("data", (d) => {
    out += d;
  });
  proc.stderr!.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.once("exit", (code) => {
      live.delete(proc);
      resolve(code);
    }),
  );
  const timeoutMs = o.timeoutMs ?? 30_000;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`engine did not start in ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    const onData = () => {
      const m = /listening on (http:\/\/\S+?);/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`engine exited with ${code} before listening:\n${out}`));
    });
  });
  const models = [...out.matchAll(/[;,] (\S+) \(n_ctx/g)].map((m) => m[1]!);
  return {
    proc,
    url,
    modelsDir,
    models,
    exited,
    output: () => out,
    async stop(signal = "SIGTERM", keepModels = false) {
      let code = proc.exitCode;
      if (code === null && proc.signalCode === null) {
        proc.kill(signal);
        const t = setTimeout(() => proc.kill("SIGKILL"), 15_000);
        code = await exited;
        clearTimeout(t);
      }
      if (owned && !keepModels) rmSync(modelsDir, { recursive: true, force: true });
      return code;
    },
  };
}
