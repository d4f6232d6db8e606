// A real llama.cpp engine (`kubemoot-scheduler engine`, node-llama-cpp on the CPU) as a child
// process of its own (src/engine-process), over generated models (docs/rules/engines.md "A
// generated model"): a model llama.cpp cannot take may abort that process, never the test
// runner. Each engine gets a fresh model directory unless given one; the same seed gives the
// same model bytes every time.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type EngineProcess, startEngineProcess } from "../../src/engine-process/index.js";
import { GGUF_PRESETS, writeLlamaGguf } from "../../src/engines/index.js";
import { assertBuilt } from "./sidecar-process.js";

export interface LlamaEngineProcess extends EngineProcess {
  readonly modelsDir: string;
  /** SIGTERM (or `signal`), then the exit code; a model directory it wrote is removed. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export type ModelSeeds = Record<string, number | { seed: number; context: number }>;

export interface LlamaEngineProcessOptions {
  /** Models to write into a fresh directory, id → seed of the tiny preset (or a seed and a training context); default {tiny: 1}. */
  models?: ModelSeeds;
  /** Serve this directory instead (kept at stop). */
  modelsDir?: string;
  /** Engine flags after --models (e.g. --parallel 2). */
  args?: string[];
  /** Listen address; default 127.0.0.1:0. */
  listen?: string;
}

/** Writes tiny models (each its seed, and its training context when given) into a fresh directory. */
export function writeModels(models: ModelSeeds = { tiny: 1 }): string {
  const dir = mkdtempSync(path.join(tmpdir(), "kubemoot-engine-"));
  for (const [id, m] of Object.entries(models)) {
    const { seed, context } = typeof m === "number" ? { seed: m, context: GGUF_PRESETS.tiny.context } : m;
    writeLlamaGguf(path.join(dir, `${id}.gguf`), { seed, shape: { ...GGUF_PRESETS.tiny, context } });
  }
  return dir;
}

export async function startLlamaEngineProcess(
  o: LlamaEngineProcessOptions = {},
): Promise<LlamaEngineProcess> {
  assertBuilt();
  const modelsDir = o.modelsDir ?? writeModels(o.models);
  const owned = o.modelsDir === undefined;
  let engine: EngineProcess;
  try {
    engine = await startEngineProcess({
      modelsDir,
      ...(o.listen ? { listen: o.listen } : {}),
      ...(o.args ? { args: o.args } : {}),
    });
  } catch (err) {
    if (owned) rmSync(modelsDir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...engine,
    modelsDir,
    async stop(signal) {
      const code = await engine.stop(signal);
      if (owned) rmSync(modelsDir, { recursive: true, force: true });
      return code;
    },
  };
}
