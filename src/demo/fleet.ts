// The demo's GPUs: a fleet of cards described as data (prod: two emulated Ollama cards; mixed:
// an Ollama card beside an emulated vLLM server; real: an Ollama card beside a real llama.cpp on
// this machine's CPU), and manifests (the example crew and the fleet's bundle) pointed at them.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startEmulator } from "../emulator/index.js";
import { readPromSamples } from "../engines/index.js";
import { repoRoot } from "../repo-root.js";
import type { DemoCard, RunningCard } from "./card.js";
import { startRealCard } from "./real-card.js";

export type { DemoCard, RunningCard } from "./card.js";

export interface DemoFleetSpec {
  /** The bundle under examples/ the crew binds to. */
  bundle: string;
  cards: readonly DemoCard[];
}

/** On-disk sizes (MiB) of the prod bundle's models; footprints add the KV slab at load. */
export const DEMO_MODELS: Record<string, number> = {
  "qwen3:32b": 20000,
  "qwen3:14b": 9000,
  "qwen3:8b": 4863,
  "nomic-embed-text": 262,
};

export const DEMO_FLEET_NAMES = ["prod", "mixed", "real"] as const;
export type DemoFleetName = (typeof DEMO_FLEET_NAMES)[number];

const OLLAMA_A: DemoCard = {
  provider: "ollama-a",
  label: "RTX 5090",
  vramMiB: 32605,
  engine: "ollama",
  models: DEMO_MODELS,
  slots: 1,
  exampleEndpoint: "http://ollama-a.kubemoot.svc:11434",
};

export const DEMO_FLEETS: Record<DemoFleetName, DemoFleetSpec> = {
  prod: {
    bundle: "prod",
    cards: [
      OLLAMA_A,
      {
        provider: "ollama-b",
        label: "RTX 4090",
        vramMiB: 24563,
        engine: "ollama",
        models: DEMO_MODELS,
        slots: 1,
        exampleEndpoint: "http://ollama-b.kubemoot.svc:11434",
      },
    ],
  },
  // examples/mixed: qwen3:14b is on both engines, so its calls can land on either card. The vLLM
  // server runs 2 sequences at once (--max-num-seqs 2): with vLLM's default 256 its free slots
  // would take every call of this small crew and the Ollama card would never load a model.
  mixed: {
    bundle: "mixed",
    cards: [
      OLLAMA_A,
      {
        provider: "vllm-b",
        label: "L40S",
        vramMiB: 46068,
        engine: "vllm",
        models: { "qwen3:14b": DEMO_MODELS["qwen3:14b"]! },
        slots: 2,
        exampleEndpoint: "http://vllm-b.kubemoot.svc:8000",
      },
    ],
  },
  // examples/real: a real llama.cpp on this machine's CPU, 2 slots, serving a generated model
  // (its answers are noise; its tokens, context, slots and prompt cache are real).
  real: {
    bundle: "real",
    cards: [
      OLLAMA_A,
      {
        provider: "llama-real",
        label: "CPU",
        vramMiB: 4096,
        engine: "llamacpp",
        models: { "kubemoot-tiny": 1 },
        slots: 2,
        exampleEndpoint: "http://llama-real.kubemoot.svc:8080",
        real: true,
      },
    ],
  },
};

/** The context the example providers advertise (status.capacity.contextLength). */
export const DEMO_CONTEXT = 8192;

export interface DemoFleet {
  bundle: string;
  cards: RunningCard[];
  close(): Promise<void>;
}

/**
 * Starts the cards: emulators (`speed` 10 makes loads and tokens ten times faster than real)
 * and, for a `real` card, the real llama.cpp over generated models written into `workDir`.
 */
export async function startDemoFleet(
  speed: number,
  spec: DemoFleetSpec = DEMO_FLEETS.prod,
  workDir?: string,
): Promise<DemoFleet> {
  const cards: RunningCard[] = [];
  try {
    for (const card of spec.cards)
      cards.push(card.real ? await startRealCard(card, workDir) : await emulated(card, speed));
  } catch (err) {
    for (const c of cards) await c.close();
    throw err;
  }
  return {
    bundle: spec.bundle,
    cards,
    async close() {
      await Promise.all(cards.map((c) => c.close()));
    },
  };
}

async function emulated(card: DemoCard, speed: number): Promise<RunningCard> {
  const emulator = await startEmulator({
    listen: "127.0.0.1:0",
    engine: card.engine,
    vramMiB: card.vramMiB,
    models: card.models,
    contextLength: DEMO_CONTEXT,
    ...(card.engine === "ollama" ? { numParallel: card.slots } : { slots: card.slots }),
    timeScale: 1 / speed,
    tokensPerS: 40,
  });
  let kv: number | undefined;
  return {
    card,
    url: emulator.url,
    state: () => emulator.state(),
    kvCacheUsage: () => kv,
    async sample() {
      kv = await readKvCacheUsage(card, emulator.url);
    },
    close: () => emulator.close(),
  };
}

/**
 * The KV-cache share (0..1) a vLLM card reports on its /metrics, read as the publisher reads it;
 * undefined for any other card or when the scrape fails (the view then leaves it out).
 */
async function readKvCacheUsage(card: DemoCard, url: string): Promise<number | undefined> {
  if (card.engine !== "vllm") return undefined;
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return undefined;
    const [sample] = readPromSamples(await res.text(), (n) => n === "vllm:kv_cache_usage_perc");
    return sample && Number.isFinite(sample.value) ? sample.value : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the example crew and the fleet's bundle into `dir`, providers pointed at the fleet. */
export function writeDemoManifests(dir: string, fleet: DemoFleet): void {
  const root = repoRoot();
  const bundle = fleet.bundle;
  mkdirSync(dir, { recursive: true });
  for (const f of ["crew/namespace.yaml", "crew/agents.yaml", "crew/policy.yaml", `${bundle}/models.yaml`]) {
    copyFileSync(path.join(root, "examples", f), path.join(dir, f.replace("/", "-")));
  }
  let providers = readFileSync(path.join(root, "examples", bundle, "providers.yaml"), "utf8");
  for (const { card, url } of fleet.cards) providers = providers.replace(card.exampleEndpoint, url);
  writeFileSync(path.join(dir, `${bundle}-providers.yaml`), providers);
}
