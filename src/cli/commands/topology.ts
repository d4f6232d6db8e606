import { stringify } from "yaml";
import { ErrorCode, invalidArgument, KubemootError } from "../../errors/index.js";
import { manifestError, readDocuments } from "../../manifests/index.js";
import { parseTopologyManifests, planTopology, toDryRun, toKueue } from "../../topology/index.js";
import type { Command, FlagValues } from "../command.js";
import { JSON_OUTPUT_FLAG, MANIFESTS_FLAG, manifestPaths } from "../manifest-flags.js";

// The topology dry run (docs/rules/topology.md "`topology` dry run"): manifests in, source status,
// hierarchy profiles and gang admission out as JSON — or, with --emit kueue, the Kueue objects
// that make a cluster enforce the same admission.
export const command: Command = {
  name: "topology",
  summary: "dry run of topology sources, hierarchy profiles and gang admission",
  details: [
    "Reads every YAML/JSON document under the --manifests paths: Nodes (v1, with labels, taints,",
    "status.allocatable and the Ready condition), Pods (bound ones use capacity; unbound ones",
    "sharing the kueue.x-k8s.io/pod-group-name label form a gang, with the",
    "kueue.x-k8s.io/podset-required-topology or -preferred-topology annotation), ConfigMaps,",
    "TopologySources and ModelDeployments (a gang per replica per engine with",
    "topology.requiredLevel); other documents are skipped. It validates the sources, derives each",
    "Node's hierarchy profile, and admits the gangs in key order, each taking its pods from the",
    "capacity the next one sees. Webhook sources are not called: they show as not Ready.",
    "",
    "--emit kueue prints instead, as YAML: a Kueue Topology per profile, ResourceFlavors pinned to",
    "the profiles, the ClusterQueue and LocalQueues, NFD NodeFeatures carrying the profile label,",
    "and the gangs' Pods with the queue label and group annotations.",
    "",
    "Exit status: 0 when the manifests parse (even with gangs that are not admitted); 2 when a",
    "manifest or flag is invalid (the message names the file, object and field), a profile's",
    "existing Kueue Topology has drifted, or the queue plan needs more than 64 flavors.",
    "",
    "Examples:",
    "  kubemoot-scheduler topology --manifests examples/topology --output json",
    "  kubemoot-scheduler topology --manifests examples/topology --emit kueue | kubectl apply -f -",
  ].join("\n"),
  flags: {
    ...MANIFESTS_FLAG,
    ...JSON_OUTPUT_FLAG,
    emit: { type: "string", description: "render objects for another system instead: kueue", value: "kueue" },
    now: {
      type: "string",
      description: "the time joint admission measures waiting sets against (default: now)",
      value: "ISO-TIME",
    },
  },
  run: async (flags) => {
    const options = readOptions(flags);
    const { docs, issues } = await readDocuments(options.manifests);
    const parsed = parseTopologyManifests(docs);
    issues.push(...parsed.issues);
    if (issues.length > 0) throw manifestError(issues);
    const plan = planTopology(parsed.manifests, options.now);
    if (options.emit === "kueue") {
      const emitted = toKueue(plan, parsed.manifests.nodes);
      if (!emitted.ok)
        throw new KubemootError(ErrorCode.InvalidManifest, `${emitted.reason}: ${emitted.message}`);
      const head = emitted.notes.map((n) => `# ${n}\n`).join("");
      const body = emitted.objects.map((o) => `---\n${stringify(o, { lineWidth: 0 })}`).join("");
      process.stdout.write(head + body);
      return 0;
    }
    if (plan.drift.length > 0) {
      throw new KubemootError(ErrorCode.InvalidManifest, `ProfileDrift: ${plan.drift.join("; ")}`);
    }
    process.stdout.write(`${JSON.stringify(toDryRun(plan), null, 2)}\n`);
    return 0;
  },
};

interface TopologyFlags {
  manifests: string[];
  emit: "kueue" | undefined;
  now: number;
}

function readOptions(flags: FlagValues): TopologyFlags {
  const manifests = manifestPaths(flags);
  const emit = flags.emit;
  if (emit !== undefined && emit !== "kueue")
    throw invalidArgument("--emit", `only kueue is supported, got "${emit}"`);
  let now = Date.now();
  if (typeof flags.now === "string") {
    now = /^\d{4}-\d{2}-\d{2}T/.test(flags.now) ? Date.parse(flags.now) : Number.NaN;
    if (!Number.isFinite(now)) throw invalidArgument("--now", `expected an ISO time, got "${flags.now}"`);
  }
  return { manifests, emit, now };
}
