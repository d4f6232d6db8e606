// The fleet's ledger (docs/rules/fleet.md rule 6): every pool's capacity minus what the replicas
// that stay hold, charged at their recorded shape. Replicas on deleted clusters or pools
// charge nothing; pods a pool's report already counts (scheduled ones) are not charged twice.
import { type Claim, PoolCapacity } from "./capacity.js";
import type { ClusterView, PoolView } from "./pools.js";
import type { ModelReplica, ReplicaMember } from "./types.js";

export class Ledger {
  private readonly pools = new Map<string, Map<string, PoolCapacity>>();

  constructor(private readonly clusters: ReadonlyMap<string, ClusterView>) {}

  /** The pool's remaining capacity (live: charges mutate it). */
  pool(cluster: string, pool: PoolView): PoolCapacity {
    let byPool = this.pools.get(cluster);
    if (!byPool) {
      byPool = new Map();
      this.pools.set(cluster, byPool);
    }
    let cap = byPool.get(pool.pool.name);
    if (!cap) {
      cap = PoolCapacity.of(pool.pool);
      byPool.set(pool.pool.name, cap);
    }
    return cap;
  }

  /** Replaces a pool's capacity with one charged on a copy (a committed placement). */
  commit(cluster: string, pool: PoolView, capacity: PoolCapacity): void {
    this.pool(cluster, pool);
    this.pools.get(cluster)!.set(pool.pool.name, capacity);
  }

  /** Charges an existing replica at its recorded shape. */
  chargeRecorded(replica: ModelReplica): void {
    const view = this.clusters.get(replica.clusterName);
    if (!view) return;
    for (const engine of replica.engines) {
      for (const member of engine.members) {
        const pool = view.poolByName.get(member.nodePoolName);
        if (!pool) continue;
        const cap = this.pool(replica.clusterName, pool);
        if (replica.podsScheduled && cap.counting === "devices") continue;
        cap.charge(
          recordedClaim(member, pool),
          memberPods(member.role, member.workerNodes) * engine.copies,
          true,
        );
      }
    }
  }
}

export function memberPods(role: string, workerNodes: number | undefined): number {
  return role === "Worker" ? (workerNodes ?? 1) : 1;
}

/** What one pod of a recorded member claims, by driver (its device classes mapped through the pool). */
export function recordedClaim(member: ReplicaMember, pool: PoolView): Claim {
  const claim: Record<string, number> = {};
  for (const r of member.deviceRequests) {
    const device =
      pool.devices.find((d) => d.claim === "DRA" && d.deviceClassName === r.deviceClassName) ??
      pool.devices.find((d) => d.deviceClassName === r.deviceClassName);
    if (device?.claim === "Synthetic") continue;
    const driver = device?.driver ?? r.deviceClassName;
    claim[driver] = (claim[driver] ?? 0) + r.count;
  }
  return claim;
}
