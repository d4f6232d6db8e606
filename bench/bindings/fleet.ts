// The emulated fleet of `bench bindings` (docs/benchmarks.md "bindings"): N Ollama emulators
// with varied VRAM, and the manifests the operator reads for them: one ModelProvider per
// emulator (its URL, a scheduling weight), the Models each one serves (qwen3 8b everywhere,
// 14b from 12 GiB, 32b from 24 GiB), the example crew (examples/crew) of four agents. Weights
// and sizes vary with the provider's index, so the crew's threads spread over many providers:
// mulling draws heavy weights, triage light ones, each load term pushes the next thread on.
// A provider is killed by closing its emulator (connection refused from then on) and revived
// by a new emulator on the same port with the same models.
import { copyFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { repoRoot } from "../lib/report.js";

/** VRAM of the emulated cards, MiB, by provider index (cycled). */
const VRAM_CLASSES = [8192, 12288, 16384, 24576, 32768, 49152, 81920];
/** The models a card may serve: what it fits decides (vramMib plus a margin ≤ VRAM). */
const MODELS = [
  { id: "qwen3:8b", slug: "qwen3-8b", params: "8B", latencyClass: "low", vramMib: 5632, diskMiB: 4863 },
  { id: "qwen3:14b", slug: "qwen3-14b", params: "14B", latencyClass: "medium", vramMib: 9216, diskMiB: 9000 },
  { id: "qwen3:32b", slug: "qwen3-32b", params: "32B", latencyClass: "high", vramMib: 20480, diskMiB: 20000 },
] as const;
export const MAX_PARALLEL = 2;
const CONTEXT = 8192;

export interface ProviderSpec {
  name: string;
  vramMiB: number;
  weight: number;
  models: (typeof MODELS)[number][];
}

/** The fleet's providers: gpu-00 … gpu-<n-1>, VRAM cycled, weights 20…100 scattered. */
export function providerSpecs(n: number): ProviderSpec[] {
  return Array.from({ length: n }, (_, i) => {
    const vramMiB = VRAM_CLASSES[i % VRAM_CLASSES.length]!;
    return {
      name: `gpu-${String(i).padStart(2, "0")}`,
      vramMiB,
      weight: 20 + ((i * 29) % 81),
      models: MODELS.filter((m) => m.vramMib + 2048 <= vramMiB),
    };
  });
}

/** The emulator of one provider; `port` 0 picks a free one (the first start). */
export function startCard(p: ProviderSpec, port = 0): Promise<EmulatorHandle> {
  return startEmulator({
    listen: `127.0.0.1:${port}`,
    vramMiB: p.vramMiB,
    models: Object.fromEntries(p.models.map((m) => [m.id, m.diskMiB])),
    numParallel: MAX_PARALLEL,
    contextLength: CONTEXT,
    timeScale: 0.01,
  });
}

/** The agents the threads are opened for: the example crew's four (one coordinator). */
export const CREW_AGENTS = [
  "crew-homelab/synthesizer",
  "crew-homelab/kubectl-agent",
  "crew-homelab/prometheus-agent",
  "crew-homelab/capacity-analyst",
];

/** Writes the crew, the providers (at the emulators' URLs) and the Models into `dir`. */
export function writeManifests(dir: string, specs: readonly ProviderSpec[], urls: readonly string[]): void {
  for (const f of ["namespace.yaml", "agents.yaml", "policy.yaml"])
    copyFileSync(path.join(repoRoot, "examples", "crew", f), path.join(dir, `crew-${f}`));
  const providers = specs.map((p, i) =>
    [
      "apiVersion: kubemoot.ai/v1alpha1",
      "kind: ModelProvider",
      "metadata:",
      `  name: ${p.name}`,
      "  namespace: kubemoot",
      "  labels:",
      `    gpu: emulated-${Math.round(p.vramMiB / 1024)}g`,
      "spec:",
      "  type: ollama",
      `  endpoint: ${urls[i]}`,
      "  scheduling:",
      `    weight: ${p.weight}`,
      "status:",
      "  ready: true",
      "  capacity:",
      `    vramTotalMiB: ${p.vramMiB}`,
      "    vramUsedMiB: 0",
      `    maxParallel: ${MAX_PARALLEL}`,
      "    agentCount: 0",
      `    contextLength: ${CONTEXT}`,
    ].join("\n"),
  );
  const models = specs.flatMap((p) =>
    p.models.map((m) =>
      [
        "apiVersion: kubemoot.ai/v1alpha1",
        "kind: Model",
        "metadata:",
        `  name: ${m.slug}-${p.name}`,
        "  namespace: kubemoot",
        "  labels:",
        "    family: qwen3",
        `    params: "${m.params}"`,
        '    capability/tool-calling: "true"',
        ...(m.id === "qwen3:8b" ? [] : ['    capability/reasoning: "true"']),
        '    contextWindow: "40960"',
        `    latencyClass: ${m.latencyClass}`,
        "spec:",
        `  model: ${m.id}`,
        `  providerRef: ${p.name}`,
        `  vramMib: ${m.vramMib}`,
        "status:",
        "  ready: true",
      ].join("\n"),
    ),
  );
  writeFileSync(path.join(dir, "providers.yaml"), `${providers.join("\n---\n")}\n`);
  writeFileSync(path.join(dir, "models.yaml"), `${models.join("\n---\n")}\n`);
}
