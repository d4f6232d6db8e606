// Fleet placement from a manifests directory (the operator's --manifests mode): every rescan
// reads the fleet kinds from the same paths as the binder, places, and writes
//
//   <outDir>/fleet/replicas.yaml     the ModelReplicas (pool-pinned) a cluster should hold
//   <outDir>/fleet/deployments.json  each deployment's status (ReplicasScheduled) and errors
//
// ModelReplicas in the manifests are the observed replicas (with their status); one that is
// Ready with an address becomes a ModelProvider, handed to the binder in memory (see
// withExtraProviders) — never written into the manifests.
import { resolve } from "node:path";
import { stringify } from "yaml";
import { type Logger, silentLogger } from "../../log/index.js";
import { readDocuments } from "../../manifests/index.js";
import { atomicWrite } from "../sources/index.js";
import { type DesiredFleet, desiredFleet, type FleetObjects, type RawObject } from "./desired.js";

export const FLEET_DIR = "fleet";
export const REPLICAS_FILE = "replicas.yaml";
export const DEPLOYMENTS_FILE = "deployments.json";

export interface FileFleetOptions {
  manifests: readonly string[];
  /** Where fleet/replicas.yaml and fleet/deployments.json go; never read as manifests. */
  outDir: string;
  logger?: Logger;
  /** Rescan interval (ms); default 5 000; 0 turns it off (call refresh()). */
  rescanMs?: number;
  fill?: boolean;
  /** Called when the set of fleet-made ModelProviders changes. */
  onProviders?: (providers: RawObject[]) => void;
  now?: () => number;
}

/** Reads the fleet kinds under `paths` (skipping `ignore`; unparsable documents are the binder's to report). */
export async function readFleetObjects(
  paths: readonly string[],
  ignore: readonly string[] = [],
): Promise<FleetObjects> {
  const out: FleetObjects = { deployments: [], clusters: [], classes: [], replicas: [] };
  const byKind = new Map<unknown, RawObject[]>([
    ["ModelDeployment", out.deployments as RawObject[]],
    ["InferenceCluster", out.clusters as RawObject[]],
    ["InferenceClass", out.classes as RawObject[]],
    ["ModelReplica", out.replicas as RawObject[]],
  ]);
  const { docs } = await readDocuments(paths, ignore);
  for (const { value } of docs) {
    const v = value as RawObject | null;
    if (!v || typeof v !== "object" || v.apiVersion !== "kubemoot.ai/v1alpha1") continue;
    byKind.get(v.kind)?.push(v);
  }
  return out;
}

export class FileFleet {
  private readonly o: FileFleetOptions;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private lastWritten = "";
  private lastProviders = "[]";
  private providerList: RawObject[] = [];
  private previous = new Map<string, DesiredFleet["statuses"][number]["status"]["conditions"]>();
  last: DesiredFleet | undefined;

  constructor(o: FileFleetOptions) {
    this.o = o;
    this.log = o.logger ?? silentLogger;
  }

  providers(): RawObject[] {
    return this.providerList;
  }

  async start(): Promise<void> {
    await this.refresh();
    const every = this.o.rescanMs ?? 5000;
    if (every > 0) {
      this.timer = setInterval(() => {
        this.refresh().catch((err: unknown) => this.log.error({ err: String(err) }, "fleet: rescan failed"));
      }, every);
      this.timer.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads, places and writes once. */
  async refresh(): Promise<DesiredFleet> {
    const objects = await readFleetObjects(this.o.manifests, [this.o.outDir]);
    const now = new Date((this.o.now ?? Date.now)()).toISOString();
    const d = desiredFleet(objects, { fill: this.o.fill ?? true, now, previous: this.previous });
    this.last = d;
    for (const s of d.statuses) this.previous.set(`${s.namespace}/${s.name}`, s.status.conditions);
    for (const i of d.issues) {
      this.log.warn(
        { kind: i.kind, object: i.object, field: i.field },
        `fleet: invalid object skipped: ${i.message}`,
      );
    }
    const replicasYaml = [...d.replicas.values()].map((r) => stringify(r)).join("---\n");
    const deployments = JSON.stringify(
      Object.fromEntries(
        d.statuses.map((s) => [`${s.namespace}/${s.name}`, { ...s.status, errors: s.errors }]),
      ),
      null,
      2,
    );
    const print = `${replicasYaml}\n${deployments}`;
    if (print !== this.lastWritten) {
      const dir = resolve(this.o.outDir, FLEET_DIR);
      await atomicWrite(resolve(dir, REPLICAS_FILE), replicasYaml);
      await atomicWrite(resolve(dir, DEPLOYMENTS_FILE), `${deployments}\n`);
      this.lastWritten = print;
      this.log.info(
        { replicas: d.replicas.size, deployments: d.statuses.length },
        "fleet: placement written",
      );
    }
    const providers = [...d.providers.values()];
    const pprint = JSON.stringify(providers);
    if (pprint !== this.lastProviders) {
      this.lastProviders = pprint;
      this.providerList = providers;
      this.o.onProviders?.(providers);
    }
    return d;
  }
}
