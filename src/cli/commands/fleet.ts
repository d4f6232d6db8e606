import { parseFleetDocuments, placeFleet, toDryRun } from "../../fleet/index.js";
import { manifestError, readDocuments } from "../../manifests/index.js";
import type { Command, FlagValues } from "../command.js";
import { JSON_OUTPUT_FLAG, MANIFESTS_FLAG, manifestPaths } from "../manifest-flags.js";

// The fleet scheduler's dry run (docs/rules/fleet.md "`fleet` dry run"): manifests in, the replicas
// each ModelDeployment would have and its ReplicasScheduled condition out, without a cluster.
export const command: Command = {
  name: "fleet",
  summary: "dry run of fleet placement of model replicas onto clusters and pools",
  details: [
    "Reads every YAML/JSON document under the --manifests paths (ModelDeployments,",
    "InferenceClusters with their published gpuPools, InferenceClasses and existing",
    "ModelReplicas; documents of other kinds or API groups are skipped), runs one reconcile:",
    "retain → scale down → ledger → fill, and prints for every deployment its replicas (cluster,",
    "index, gateway, and per engine member the pinned pool and device requests), sorted by",
    "(cluster, index), and its ReplicasScheduled condition. --no-fill keeps and scales down the",
    "existing replicas without placing new ones.",
    "",
    "Exit status: 0 when every deployment is valid (even with replicas left unscheduled); 1 when",
    "a deployment has a CEL selector that does not compile (the JSON is still printed, the",
    "error names the deployment, engine, member, request and selector); 2 when a manifest or",
    "flag is invalid, with a message naming the file, object and field.",
    "",
    "Example:",
    "  kubemoot-scheduler fleet --manifests examples/fleet --output json",
  ].join("\n"),
  flags: {
    ...MANIFESTS_FLAG,
    ...JSON_OUTPUT_FLAG,
    "no-fill": { type: "boolean", description: "retain existing replicas without placing new ones" },
  },
  run: async (flags) => {
    const options = readOptions(flags);
    const { docs, issues } = await readDocuments(options.manifests);
    const parsed = parseFleetDocuments(docs);
    issues.push(...parsed.issues);
    if (issues.length > 0) throw manifestError(issues);
    const result = placeFleet(parsed.input, { fill: !options.noFill });
    process.stdout.write(`${JSON.stringify(toDryRun(result), null, 2)}\n`);
    const errors = result.deployments.flatMap((d) => d.errors);
    for (const e of errors) process.stderr.write(`kubemoot-scheduler fleet: InvalidNodeSelector: ${e}\n`);
    return errors.length > 0 ? 1 : 0;
  },
};

function readOptions(flags: FlagValues): { manifests: string[]; noFill: boolean } {
  const manifests = manifestPaths(flags);
  return { manifests, noFill: flags["no-fill"] === true };
}
