// The demo's real card (`--fleet real`): a real llama.cpp, `kubemoot-scheduler engine` as a
// process of its own (docs/rules/engines.md "A real llama.cpp engine"), over models generated at
// start (`kubemoot-scheduler gguf`'s tiny shape with an 8192-token training context, so the
// crew's prompts fit a slot). The view draws it from its /metrics: requests processing and
// deferred, and its resident memory against the host memory it may use.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { EmulatorState } from "../emulator/index.js";
import { startEngineProcess } from "../engine-process/index.js";
import { GGUF_PRESETS, readPromSamples, writeLlamaGguf } from "../engines/index.js";
import type { DemoCard, RunningCard } from "./card.js";

/** A slot's context on the real card (tokens): the crew's longest prompts and answers fit. */
export const REAL_SLOT_CONTEXT = 8192;

const MIB = 1024 * 1024;

export async function startRealCard(card: DemoCard, workDir?: string): Promise<RunningCard> {
  const dir = mkdtempSync(path.join(workDir ?? os.tmpdir(), "kubemoot-real-card-"));
  const shape = { ...GGUF_PRESETS.tiny, context: REAL_SLOT_CONTEXT };
  for (const [id, seed] of Object.entries(card.models))
    writeLlamaGguf(path.join(dir, `${id}.gguf`), { seed, shape });
  let engine: Awaited<ReturnType<typeof startEngineProcess>>;
  try {
    engine = await startEngineProcess({
      modelsDir: dir,
      args: ["--parallel", String(card.slots), "--ctx", String(REAL_SLOT_CONTEXT * card.slots)],
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let last = { processing: 0, deferred: 0, residentMiB: 0 };
  const state = (): EmulatorState => ({
    now: new Date().toISOString(),
    emulatedMs: 0,
    timeScale: 1,
    vramMiB: card.vramMiB,
    usedMiB: last.residentMiB,
    freeMiB: Math.max(0, card.vramMiB - last.residentMiB),
    numParallel: card.slots,
    contextLength: REAL_SLOT_CONTEXT,
    models: engine.models.map((m, i) => ({
      name: m.id,
      state: "ready",
      numCtx: m.nCtx,
      // The process's memory is charged to its first model, as the provider publisher does.
      footprintMiB: i === 0 ? last.residentMiB : 0,
      weightsMiB: 0,
      kvMiB: 0,
      active: last.processing,
      waiting: last.deferred,
      keepAlive: "-1",
      expiresAt: null,
    })),
    pending: [],
    activeCount: last.processing,
    queueDepth: last.deferred,
    faults: [],
  });
  return {
    card,
    url: engine.url,
    state,
    kvCacheUsage: () => undefined, // current llama.cpp builds export no KV-cache gauge
    async sample() {
      try {
        const res = await fetch(`${engine.url}/metrics`, { signal: AbortSignal.timeout(2000) });
        const samples = readPromSamples(await res.text());
        const value = (name: string) => samples.find((x) => x.name === name)?.value ?? 0;
        last = {
          processing: value("llamacpp:requests_processing"),
          deferred: value("llamacpp:requests_deferred"),
          residentMiB: Math.ceil(value("process_resident_memory_bytes") / MIB),
        };
      } catch {
        // the view keeps the last figures
      }
    },
    async close() {
      await engine.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
