// `kubemoot-scheduler bind` as a process, on the shipped examples. Run after a build
// (`npm test` builds first; or `npx tsc -p tsconfig.build.json`).
//
// The expectations are computed by hand from docs/rules/binding.md:
//   score = prefer + quality bias + locality (+10) ± provider weight + load + capacity
// Prod: ollama-a (RTX 5090, weight 100, 32605 MiB, maxParallel 2, qwen3:32b loaded, 21504 MiB)
//       ollama-b (RTX 4090, weight 25, 24563 MiB, maxParallel 2, qwen3:8b loaded, 6144 MiB)
//   capacity (spread): usable(32605) = 32605 − max(2048, ⌊0.12·32605⌋ = 3912) = 28693,
//     free (28693 − 21504) / 28693 = 0.2506 → round(20 · 0.2506) = 5;
//     usable(24563) = 24563 − 2947 = 21616, (21616 − 6144) / 21616 = 0.7158 → 14.
// Crew biases: synthesizer reasoning 0.7; kubectl-agent max(0.3) = 0.3; prometheus-agent
//   max(0.3, 0.4) = 0.4; capacity-analyst (no mapped capability) default 0.5.
//   latency terms (high / medium / low): 0.7 → 70/60/30, 0.3 → 30/60/70, 0.4 → 40/80/60,
//   0.5 → 50/100/50.
// Order: the coordinator first, then by name: synthesizer, capacity-analyst, kubectl-agent,
//   prometheus-agent. Load = −⌊10 · n / 2⌋ for the n agents already bound there in the phase.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DryRunOutput } from "../../src/binding/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "kubemoot-scheduler.js");

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, "bind", ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function bindJson(...args: string[]): DryRunOutput {
  const r = cli(...args, "--output", "json");
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as DryRunOutput;
}

beforeAll(() => {
  // A stale build would test old code: every source of the command must be older than its output.
  const sources = [
    "src/cli/commands/bind.ts",
    "src/binding/bind.ts",
    "src/binding/score.ts",
    "src/operator/manifests/parse.ts",
  ];
  for (const src of sources) {
    const out = join(ROOT, "dist", src.replace(/\.ts$/, ".js"));
    if (!existsSync(out) || statSync(out).mtimeMs < statSync(join(ROOT, src)).mtimeMs) {
      throw new Error(
        `${relative(ROOT, out)} is missing or older than ${src}: run npx tsc -p tsconfig.build.json`,
      );
    }
  }
});

const A = "http://ollama-a.kubemoot.svc:11434";
const B = "http://ollama-b.kubemoot.svc:11434";
const TRIAGE_LIST = [
  { model: "qwen3:8b", score: 100 }, // prefer latencyClass low
  { model: "qwen3:14b", score: 50 }, // prefer latencyClass medium
  { model: "qwen3:32b", score: 0 },
];

describe("bind on the prod bundle", () => {
  it("binds the crew as computed by hand", () => {
    const out = bindJson("--manifests", "examples/crew", "--manifests", "examples/prod");
    expect(out).toEqual({
      agents: {
        "crew-homelab/capacity-analyst": {
          // bias 0.5; ollama-a already has 1 mulling agent → −⌊10/2⌋ = −5
          // 14b-a: 100 + 100 + 5 − 5 = 200; 32b: 50 + 10 + 100 + 5 − 5 = 160;
          // 14b-b: 100 + 25 + 14 = 139; 8b: 50 + 10 + 25 + 14 = 99
          mulling: {
            model: "qwen3:14b",
            modelRef: "qwen3-14b-a",
            provider: "ollama-a",
            endpoint: A,
            engine: "ollama",
            score: 200,
          },
          // spread keeps triage off ollama-a; 8b: 100 + 10 − 25 + 14 − 5 (1 triage agent on b) = 94
          triage: {
            model: "qwen3:8b",
            modelRef: "qwen3-8b",
            provider: "ollama-b",
            endpoint: B,
            engine: "ollama",
            score: 94,
          },
          candidates: {
            // bound first; 32b and 8b tie at 50 → by id ("qwen3:32b" < "qwen3:8b")
            mulling: [
              { model: "qwen3:14b", score: 100 },
              { model: "qwen3:32b", score: 50 },
              { model: "qwen3:8b", score: 50 },
            ],
            triage: TRIAGE_LIST,
          },
          unschedulable: [],
        },
        "crew-homelab/kubectl-agent": {
          // bias 0.3; 2 mulling agents on a → −10
          // 14b-a: 60 + 100 + 5 − 10 = 155; 32b: 30 + 10 + 100 + 5 − 10 = 135; 8b: 70 + 10 + 25 + 14 = 119
          mulling: {
            model: "qwen3:14b",
            modelRef: "qwen3-14b-a",
            provider: "ollama-a",
            endpoint: A,
            engine: "ollama",
            score: 155,
          },
          // 99 − ⌊10·2/2⌋ = 89
          triage: {
            model: "qwen3:8b",
            modelRef: "qwen3-8b",
            provider: "ollama-b",
            endpoint: B,
            engine: "ollama",
            score: 89,
          },
          candidates: {
            mulling: [
              { model: "qwen3:14b", score: 60 },
              { model: "qwen3:8b", score: 70 },
              { model: "qwen3:32b", score: 30 },
            ],
            triage: TRIAGE_LIST,
          },
          unschedulable: [],
        },
        "crew-homelab/prometheus-agent": {
          // bias 0.4; 3 on a → −15; 14b-a: 80 + 100 + 5 − 15 = 170; 14b-b: 80 + 25 + 14 = 119
          mulling: {
            model: "qwen3:14b",
            modelRef: "qwen3-14b-a",
            provider: "ollama-a",
            endpoint: A,
            engine: "ollama",
            score: 170,
          },
          // 99 − 15 = 84
          triage: {
            model: "qwen3:8b",
            modelRef: "qwen3-8b",
            provider: "ollama-b",
            endpoint: B,
            engine: "ollama",
            score: 84,
          },
          candidates: {
            mulling: [
              { model: "qwen3:14b", score: 80 },
              { model: "qwen3:8b", score: 60 },
              { model: "qwen3:32b", score: 40 },
            ],
            triage: TRIAGE_LIST,
          },
          unschedulable: [],
        },
        "crew-homelab/synthesizer": {
          // coordinator, bias 0.7, no load term: 32b: 70 + 10 + 100 + 5 = 185; 14b-a: 60 + 100 + 5 = 165
          mulling: {
            model: "qwen3:32b",
            modelRef: "qwen3-32b",
            provider: "ollama-a",
            endpoint: A,
            engine: "ollama",
            score: 185,
          },
          // triage prefer: 8b 100 + 10 − 25 + 14 = 99; 14b-b 50 − 25 + 14 = 39 (ollama-a excluded by the spread)
          triage: {
            model: "qwen3:8b",
            modelRef: "qwen3-8b",
            provider: "ollama-b",
            endpoint: B,
            engine: "ollama",
            score: 99,
          },
          candidates: {
            // the spec's own example list
            mulling: [
              { model: "qwen3:32b", score: 70 },
              { model: "qwen3:14b", score: 60 },
              { model: "qwen3:8b", score: 30 },
            ],
            triage: TRIAGE_LIST,
          },
          unschedulable: [],
        },
      },
      events: [],
    });
  });

  it("prints the spec's keys in the spec's order", () => {
    const out = bindJson("--manifests", "examples/crew", "--manifests", "examples/prod");
    expect(Object.keys(out)).toEqual(["agents", "events"]);
    const entry = out.agents["crew-homelab/synthesizer"]!;
    expect(Object.keys(entry)).toEqual(["mulling", "triage", "candidates", "unschedulable"]);
    expect(Object.keys(entry.mulling!)).toEqual([
      "model",
      "modelRef",
      "provider",
      "endpoint",
      "engine",
      "score",
    ]);
  });

  it("--state overlays live provider state: with the 5090 down everything binds to the 4090", () => {
    const out = bindJson(
      "--manifests",
      "examples/crew",
      "--manifests",
      "examples/prod",
      "--state",
      "examples/state/prod-5090-down.json",
    );
    const pick = (k: string) => {
      const a = out.agents[`crew-homelab/${k}`]!;
      return [a.mulling?.modelRef, a.mulling?.score, a.triage?.modelRef, a.triage?.score];
    };
    // synthesizer: 14b-b 60 + 25 + 14 = 99 beats 8b 30 + 10 + 25 + 14 = 79; triage can only
    // share ollama-b (ScheduleAnyway): 8b 100 + 10 − 25 + 14 = 99
    expect(pick("synthesizer")).toEqual(["qwen3-14b-b", 99, "qwen3-8b", 99]);
    // capacity-analyst: 14b-b 100 + 39 − 5 = 134; kubectl-agent: 8b 70 + 49 − 10 = 109
    // (14b-b 60 + 39 − 10 = 89); prometheus-agent: 14b-b 80 + 39 − 15 = 104 (8b 60 + 49 − 15 = 94)
    expect(pick("capacity-analyst")).toEqual(["qwen3-14b-b", 134, "qwen3-8b", 94]);
    expect(pick("kubectl-agent")).toEqual(["qwen3-8b", 109, "qwen3-8b", 89]);
    expect(pick("prometheus-agent")).toEqual(["qwen3-14b-b", 104, "qwen3-8b", 84]);
    // candidate lists do not depend on provider readiness
    expect(out.agents["crew-homelab/synthesizer"]!.candidates.mulling.map((c) => c.model)).toEqual([
      "qwen3:14b",
      "qwen3:32b",
      "qwen3:8b",
    ]);
  });

  it("--strategy binpack favours the fuller card", () => {
    const out = bindJson(
      "--manifests",
      "examples/crew",
      "--manifests",
      "examples/prod",
      "--strategy",
      "binpack",
    );
    // binpack: ollama-a round(20 · 0.7494) = 15; synthesizer 32b: 70 + 10 + 100 + 15 = 195
    expect(out.agents["crew-homelab/synthesizer"]!.mulling?.score).toBe(195);
  });
});

describe("bind on the dev bundle", () => {
  it("binds the same crew to the one CPU model", () => {
    const out = bindJson("--manifests", "examples/crew", "--manifests", "examples/dev");
    const dev = "http://cpu-ollama.kubemoot.svc:11434";
    const phase = (score: number) => ({
      model: "qwen3:0.6b",
      modelRef: "qwen3-0-6b",
      provider: "cpu-ollama",
      endpoint: dev,
      engine: "ollama",
      score,
    });
    const entry = (mulling: number, triage: number, quality: number) => ({
      mulling: phase(mulling),
      triage: phase(triage),
      candidates: {
        mulling: [{ model: "qwen3:0.6b", score: quality }],
        triage: [{ model: "qwen3:0.6b", score: 100 }],
      },
      unschedulable: [],
    });
    // No VRAM reported: capacity 0. maxParallel 4: load −⌊10n/4⌋ = 0, −2, −5, −7.
    // mulling = low-latency term + 100; triage = prefer 100 − 100 + load (the spread cannot be
    // kept on one provider: ScheduleAnyway binds anyway).
    expect(out).toEqual({
      agents: {
        "crew-homelab/capacity-analyst": entry(50 + 100 - 2, 0 - 2, 50),
        "crew-homelab/kubectl-agent": entry(70 + 100 - 5, 0 - 5, 70),
        "crew-homelab/prometheus-agent": entry(60 + 100 - 7, 0 - 7, 60),
        "crew-homelab/synthesizer": entry(30 + 100, 0, 30),
      },
      events: [],
    });
  });

  it("dev and prod bind the same crew: same agents, every phase bound", () => {
    const dev = bindJson("--manifests", "examples/crew", "--manifests", "examples/dev");
    const prod = bindJson("--manifests", "examples/crew", "--manifests", "examples/prod");
    expect(Object.keys(dev.agents)).toEqual(Object.keys(prod.agents));
    expect(Object.keys(dev.agents)).toHaveLength(4);
    for (const out of [dev, prod]) {
      for (const a of Object.values(out.agents)) {
        expect(a.unschedulable).toEqual([]);
        expect(a.mulling).toBeDefined();
        expect(a.triage).toBeDefined();
      }
    }
  });
});

describe("bind errors and zero matches", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "kubemoot-bind-"));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("an invalid manifest exits 2 naming the file and field", () => {
    const file = join(dir, "broken.yaml");
    writeFileSync(
      file,
      [
        "apiVersion: v1",
        "kind: Namespace",
        "metadata: { name: x }",
        "---",
        "apiVersion: kubemoot.ai/v1alpha1",
        "kind: Model",
        "metadata: { name: qwen3-32b, namespace: kubemoot }",
        "spec: { model: qwen3:32b, providerRef: ollama-a, vramMib: lots }",
      ].join("\n"),
    );
    const r = cli("--manifests", "examples/crew", "--manifests", file, "--output", "json");
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `kubemoot-scheduler bind: invalid manifest: ${file} (document 2, Model kubemoot/qwen3-32b): spec.vramMib: expected an integer ≥ 0, got "lots"\n`,
    );
  });

  it("unschedulable agents still exit 0, with the zero-match reason and a FailedScheduling event", () => {
    const policyDir = mkdtempSync(join(dir, "zero-"));
    writeFileSync(
      join(policyDir, "policy.yaml"),
      [
        "apiVersion: kubemoot.ai/v1alpha1",
        "kind: CrewSchedulingPolicy",
        "metadata: { name: big-only, namespace: crew-homelab }",
        "spec:",
        "  crewRef: homelab",
        "  rules:",
        "    - phase: mulling",
        "      require:",
        '        matchLabels: { capability/tool-calling: "true" }',
        "        matchExpressions: [{ key: params, operator: In, values: [32B, 14B] }]",
        "    - phase: triage",
        "      require: { matchLabels: { params: 8B } }",
      ].join("\n"),
    );
    writeFileSync(
      join(policyDir, "agent.yaml"),
      [
        "apiVersion: kubemoot.ai/v1alpha1",
        "kind: Agent",
        "metadata: { name: solo, namespace: crew-homelab, labels: { kubemoot.ai/crew: homelab } }",
        "spec: { capabilities: [tool-calling] }",
      ].join("\n"),
    );
    const out = bindJson("--manifests", policyDir, "--manifests", "examples/dev");
    const reason = "no Model matches require selectors {capability/tool-calling: true, params: 14B|32B}";
    expect(out.agents["crew-homelab/solo"]).toEqual({
      candidates: { mulling: [], triage: [] },
      unschedulable: [
        { phase: "mulling", reason },
        { phase: "triage", reason: "no Model matches require selectors {params: 8B}" },
      ],
    });
    expect(out.events).toEqual([
      {
        type: "Warning",
        reason: "FailedScheduling",
        object: "CrewSchedulingPolicy/crew-homelab/big-only",
        message: `agent crew-homelab/solo phase mulling: ${reason}`,
      },
      {
        type: "Warning",
        reason: "FailedScheduling",
        object: "CrewSchedulingPolicy/crew-homelab/big-only",
        message: "agent crew-homelab/solo phase triage: no Model matches require selectors {params: 8B}",
      },
    ]);
  });

  it.each<[string, string[], string]>([
    ["no --manifests", ["--output", "json"], "--manifests: required"],
    [
      "a missing directory",
      ["--manifests", "examples/nope"],
      "manifests: examples/nope: no such file or directory",
    ],
    [
      "an unsupported output",
      ["--manifests", "examples/dev", "--output", "yaml"],
      '--output: only json is supported, got "yaml"',
    ],
    [
      "an unknown strategy",
      ["--manifests", "examples/dev", "--strategy", "pack"],
      '--strategy: expected spread or binpack, got "pack"',
    ],
    [
      "a bad factor",
      ["--manifests", "examples/dev", "--concurrency-factor=-1"],
      '--concurrency-factor: expected a number ≥ 0, got "-1"',
    ],
    [
      "a factor that is not a number",
      ["--manifests", "examples/dev", "--concurrency-factor", "many"],
      '--concurrency-factor: expected a number ≥ 0, got "many"',
    ],
    [
      "a missing state file",
      ["--manifests", "examples/dev", "--state", "examples/nope.json"],
      "state: examples/nope.json: ENOENT",
    ],
    ["an unknown flag", ["--manifests", "examples/dev", "--frobnicate"], "Unknown option '--frobnicate'"],
  ])("%s exits 2", (_name, args, message) => {
    const r = cli(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  it("--help documents the flags", () => {
    const r = cli("--help");
    expect(r.code).toBe(0);
    for (const flag of [
      "--manifests DIR",
      "--state FILE",
      "--output json",
      "--strategy spread|binpack",
      "--concurrency-factor N",
    ]) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout).toContain("Exit status: 0 when the manifests parse");
  });
});
