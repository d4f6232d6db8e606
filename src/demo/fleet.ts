// The demo's GPUs: two emulated cards with the prod bundle's models, and manifests (the
// example crew and prod bundle) pointed at them.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type EmulatorHandle, startEmulator } from "../emulator/index.js";
import { repoRoot } from "../repo-root.js";

export interface DemoCard {
  /** The ModelProvider name in examples/prod/providers.yaml. */
  provider: string;
  label: string;
  vramMiB: number;
  /** The endpoint the example manifest names, replaced by the emulator's URL. */
  exampleEndpoint: string;
}

export const DEMO_CARDS: readonly DemoCard[] = [
  {
    provider: "ollama-a",
    label: "RTX 5090",
    vramMiB: 32605,
    exampleEndpoint: "http://ollama-a.kubemoot.svc:11434",
  },
  {
    provider: "ollama-b",
    label: "RTX 4090",
    vramMiB: 24563,
    exampleEndpoint: "http://ollama-b.kubemoot.svc:11434",
  },
];

/** On-disk sizes (MiB) of the prod bundle's models; footprints add the KV slab at load. */
export const DEMO_MODELS: Record<string, number> = {
  "qwen3:32b": 20000,
  "qwen3:14b": 9000,
  "qwen3:8b": 4863,
  "nomic-embed-text": 262,
};

/** The context the example providers advertise (status.capacity.contextLength). */
export const DEMO_CONTEXT = 8192;

export interface DemoFleet {
  cards: { card: DemoCard; emulator: EmulatorHandle }[];
  close(): Promise<void>;
}

/** Starts the emulated cards; `speed` 10 makes loads and tokens ten times faster than real. */
export async function startDemoFleet(speed: number): Promise<DemoFleet> {
  const cards: DemoFleet["cards"] = [];
  try {
    for (const card of DEMO_CARDS) {
      const emulator = await startEmulator({
        listen: "127.0.0.1:0",
        vramMiB: card.vramMiB,
        models: DEMO_MODELS,
        contextLength: DEMO_CONTEXT,
        numParallel: 1,
        timeScale: 1 / speed,
        tokensPerS: 40,
      });
      cards.push({ card, emulator });
    }
  } catch (err) {
    for (const c of cards) await c.emulator.close();
    throw err;
  }
  return {
    cards,
    async close() {
      await Promise.all(cards.map((c) => c.emulator.close()));
    },
  };
}

/** Writes the example crew and prod bundle into `dir`, providers pointed at the fleet. */
export function writeDemoManifests(dir: string, fleet: DemoFleet): void {
  const root = repoRoot();
  mkdirSync(dir, { recursive: true });
  for (const f of ["crew/namespace.yaml", "crew/agents.yaml", "crew/policy.yaml", "prod/models.yaml"]) {
    copyFileSync(path.join(root, "examples", f), path.join(dir, f.replace("/", "-")));
  }
  let providers = readFileSync(path.join(root, "examples/prod/providers.yaml"), "utf8");
  for (const { card, emulator } of fleet.cards)
    providers = providers.replace(card.exampleEndpoint, emulator.url);
  writeFileSync(path.join(dir, "prod-providers.yaml"), providers);
}
