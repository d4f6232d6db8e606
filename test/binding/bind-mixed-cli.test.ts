// `kubemoot-scheduler bind` as a process on the crew and the mixed bundle (examples/mixed): an
// Ollama card and a vLLM card. Run after a build (`npm test` builds first; or
// `npx tsc -p tsconfig.build.json`). The scores follow the prod test's arithmetic
// (test/binding/bind-cli.test.ts); what this file checks is that both engines are reached:
// mulling binds on the Ollama card (weight 100), triage on the vLLM card (its qwen3:14b, the
// only model there), each phase names its provider's engine, and qwen3:14b is on every mulling
// candidate list, so the proxy can place those calls on either card.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { DryRunOutput } from "../../src/binding/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "kubemoot-scheduler.js");

it("binds the crew across an Ollama card and a vLLM card, naming each phase's engine", () => {
  const r = spawnSync(
    process.execPath,
    [BIN, "bind", "--manifests", "examples/crew", "--manifests", "examples/mixed", "--output", "json"],
    { cwd: ROOT, encoding: "utf8" },
  );
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  const out = JSON.parse(r.stdout) as DryRunOutput;
  expect(out.events).toEqual([]);
  const agents = Object.keys(out.agents).sort();
  expect(agents).toEqual([
    "crew-homelab/capacity-analyst",
    "crew-homelab/kubectl-agent",
    "crew-homelab/prometheus-agent",
    "crew-homelab/synthesizer",
  ]);
  for (const key of agents) {
    const a = out.agents[key]!;
    expect(a.unschedulable, key).toEqual([]);
    expect(a.mulling, key).toMatchObject({
      provider: "ollama-a",
      engine: "ollama",
      endpoint: "http://ollama-a.kubemoot.svc:11434",
    });
    // Triage is spread off mulling's provider: the vLLM card, whose one model is qwen3:14b.
    expect(a.triage, key).toMatchObject({
      provider: "vllm-b",
      engine: "vllm",
      model: "qwen3:14b",
      modelRef: "qwen3-14b-vllm",
      endpoint: "http://vllm-b.kubemoot.svc:8000",
    });
    expect(
      a.candidates.mulling.map((c) => c.model),
      key,
    ).toContain("qwen3:14b");
  }
  expect(out.agents["crew-homelab/synthesizer"]!.mulling).toMatchObject({ model: "qwen3:32b", score: 185 });
});
