import { invalidArgument } from "../../errors/index.js";
import {
  POLICIES,
  type PolicyName,
  SCENARIOS,
  type SimMetrics,
  scenarioByName,
  simulate,
} from "../../sim/index.js";
import type { Command, FlagValues } from "../command.js";

// `kubemoot-scheduler simulate`: one (or several) runs of the scheduling-quality simulation
// (docs/benchmarks.md `sim`). Virtual time, seeded traffic: the same flags give the same
// numbers, except the measured decision cost (decision_us_*), the only wall-clock figure.
export const command: Command = {
  name: "simulate",
  summary: "discrete-event simulation of scheduling policies (the sim benchmark)",
  details: [
    `Scenarios: ${Object.keys(SCENARIOS).join(", ")}. Policies: ${POLICIES.join(", ")} (or all).`,
    "A run replays the scenario's seeded discussion traffic against simulated Ollama GPUs (the",
    "emulator's own scheduler model on virtual time) and prints the fields of docs/benchmarks.md:",
    "latency_mean_s, latency_p95_s, latency_p99_s, gib_loaded, loads, evictions, stand_asides,",
    "gpu_busy_fraction, decision_us_p50, decision_us_p99, ideal_p95_s, and a few counts.",
    "",
    "Example:",
    "  kubemoot-scheduler simulate --scenario homelab --policy ours --seed 1 --output json",
  ].join("\n"),
  flags: {
    scenario: { type: "string", default: "homelab", description: "the simulated world", value: "NAME" },
    policy: { type: "string", default: "ours", description: "placement policy, or all", value: "NAME" },
    seed: { type: "string", default: "1", description: "seed of the traffic (an integer)", value: "N" },
    output: { type: "string", default: "json", description: "output format", value: "json|table" },
    "probe-interval-ms": {
      type: "string",
      default: "10000",
      description: "the publisher's probe interval in virtual ms (0: publish every change at once)",
      value: "MS",
    },
  },
  run: async (flags) => {
    const o = readFlags(flags);
    const scenario = scenarioByName(o.scenario);
    const rows: SimMetrics[] = [];
    for (const policy of o.policies) {
      const run = { scenario: structuredClone(scenario), policy, seed: o.seed, probeIntervalMs: o.probeMs };
      rows.push((await simulate(run)).metrics);
    }
    if (o.output === "json") {
      const body = rows.length === 1 ? rows[0] : rows;
      process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    } else {
      process.stdout.write(`${table(rows)}\n`);
    }
    return 0;
  },
};

interface SimulateFlags {
  scenario: string;
  policies: PolicyName[];
  seed: number;
  output: "json" | "table";
  probeMs: number;
}

function readFlags(flags: FlagValues): SimulateFlags {
  const scenario = String(flags.scenario ?? "homelab");
  if (!(scenario in SCENARIOS)) {
    throw invalidArgument(
      "--scenario",
      `unknown scenario "${scenario}" (known: ${Object.keys(SCENARIOS).join(", ")})`,
    );
  }
  const policy = String(flags.policy ?? "ours");
  let policies: PolicyName[];
  if (policy === "all") policies = [...POLICIES];
  else if ((POLICIES as readonly string[]).includes(policy)) policies = [policy as PolicyName];
  else throw invalidArgument("--policy", `unknown policy "${policy}" (known: ${POLICIES.join(", ")}, all)`);
  const seedText = String(flags.seed ?? "1");
  const seed = Number(seedText);
  if (!/^-?\d+$/.test(seedText.trim()) || !Number.isSafeInteger(seed)) {
    throw invalidArgument("--seed", `expected an integer, got "${seedText}"`);
  }
  const output = String(flags.output ?? "json");
  if (output !== "json" && output !== "table") {
    throw invalidArgument("--output", `expected json or table, got "${output}"`);
  }
  const probeText = String(flags["probe-interval-ms"] ?? "10000");
  const probeMs = Number(probeText);
  if (probeText.trim() === "" || !Number.isFinite(probeMs) || probeMs < 0) {
    throw invalidArgument("--probe-interval-ms", `expected a number ≥ 0, got "${probeText}"`);
  }
  return { scenario, policies, seed, output, probeMs };
}

function table(rows: readonly SimMetrics[]): string {
  const cols: Array<[string, (m: SimMetrics) => string]> = [
    ["policy", (m) => m.policy],
    ["mean/p95/p99 s", (m) => `${m.latency_mean_s} / ${m.latency_p95_s} / ${m.latency_p99_s}`],
    ["ideal p95 s", (m) => String(m.ideal_p95_s)],
    ["GiB loaded", (m) => String(m.gib_loaded)],
    ["loads", (m) => String(m.loads)],
    ["evictions", (m) => String(m.evictions)],
    [
      "stand-asides (busy/model/prompt)",
      (m) =>
        `${m.stand_asides["gpu-busy"]}/${m.stand_asides["model-too-large"]}/${m.stand_asides["prompt-too-large"]}`,
    ],
    ["GPU busy", (m) => m.gpu_busy_fraction.toFixed(3)],
    ["decision µs p50/p99", (m) => `${m.decision_us_p50} / ${m.decision_us_p99}`],
  ];
  const lines = [
    `| ${cols.map(([h]) => h).join(" | ")} |`,
    `| ${cols.map(() => "---").join(" | ")} |`,
    ...rows.map((m) => `| ${cols.map(([, f]) => f(m)).join(" | ")} |`),
  ];
  return lines.join("\n");
}
