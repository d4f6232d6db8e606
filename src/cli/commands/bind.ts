import { bind, type CapacityStrategy, DEFAULT_CONCURRENCY_FACTOR, toDryRun } from "../../binding/index.js";
import type { ProviderState } from "../../core/index.js";
import { invalidArgument } from "../../errors/index.js";
import { loadManifests, loadProviderStateFile, toSnapshot } from "../../operator/index.js";
import { SETTINGS } from "../../settings/index.js";
import type { Command, FlagValues } from "../command.js";
import { JSON_OUTPUT_FLAG, MANIFESTS_FLAG, manifestPaths } from "../manifest-flags.js";
import { settingFlags, settingFromFlag } from "../setting-flags.js";

// The binder's dry run (docs/rules/binding.md "`bind` dry run"): manifests in, the operator's
// decisions out as one JSON document, without a cluster.
export const command: Command = {
  name: "bind",
  summary: "dry run of the binder: manifests in, bindings, candidate lists and events out as JSON",
  details: [
    "Reads every YAML/JSON document under the --manifests paths (Models, ModelProviders, Agents,",
    "CrewSchedulingPolicies, MootArchetypes; documents of other API groups are skipped; a document",
    "with no apiVersion and kind is provider state, like the kubemoot_provider_state KV value),",
    "runs filter → score → bind and prints, for every agent, the mulling and triage bindings, the",
    "candidate lists and the phases that could not be bound, plus FailedScheduling and policy",
    "Warning events. The built-in consent-3 MootArchetype is used unless the manifests define one.",
    "",
    "Exit status: 0 when the manifests parse (even with unschedulable agents); 2 when a manifest",
    "or flag is invalid, with a message naming the file and field.",
    "",
    "Example:",
    "  kubemoot-scheduler bind --manifests examples/crew --manifests examples/prod --output json",
  ].join("\n"),
  flags: {
    ...MANIFESTS_FLAG,
    state: {
      type: "string",
      description:
        "provider state (JSON/YAML: an object keyed by provider name, or a list) overlaid on the providers",
      value: "FILE",
    },
    ...JSON_OUTPUT_FLAG,
    ...settingFlags("bind", SETTINGS.schedulerStrategy),
    "concurrency-factor": {
      type: "string",
      default: String(DEFAULT_CONCURRENCY_FACTOR),
      description: "parallelism headroom: agentCount + 1 ≤ maxParallel · N (0 turns the check off)",
      value: "N",
    },
    "eviction-overhead-mib": {
      type: "string",
      default: "0",
      description: "added to a Model's vramMib in the VRAM headroom check",
      value: "MIB",
    },
  },
  run: async (flags) => {
    const options = readOptions(flags);
    const set = await loadManifests(options.manifests);
    const states: ProviderState[] = options.state ? await loadProviderStateFile(options.state) : [];
    const result = bind(toSnapshot(set, states), {
      strategy: options.strategy,
      concurrencyFactor: options.concurrencyFactor,
      evictionOverheadMiB: options.evictionOverheadMiB,
      now: new Date(),
    });
    process.stdout.write(`${JSON.stringify(toDryRun(result), null, 2)}\n`);
    return 0;
  },
};

interface BindFlags {
  manifests: string[];
  state: string | undefined;
  strategy: CapacityStrategy;
  concurrencyFactor: number;
  evictionOverheadMiB: number;
}

function readOptions(flags: FlagValues): BindFlags {
  const manifests = manifestPaths(flags);
  return {
    manifests,
    state: typeof flags.state === "string" ? flags.state : undefined,
    strategy: settingFromFlag(flags, SETTINGS.schedulerStrategy),
    concurrencyFactor: nonNegative(flags["concurrency-factor"], "--concurrency-factor"),
    evictionOverheadMiB: nonNegative(flags["eviction-overhead-mib"], "--eviction-overhead-mib"),
  };
}

function nonNegative(value: unknown, flag: string): number {
  const n = typeof value === "string" && /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) throw invalidArgument(flag, `expected a number ≥ 0, got "${String(value)}"`);
  return n;
}
