// Free capacity of one pool (docs/rules/fleet.md rule 5). With the cluster agent's report
// (nodesByFreeDevices) a pool is a multiset of nodes, each with free devices per driver, and a
// pod takes its devices from the node with the most of them free; without one, every node
// starts empty and a pod that claims anything takes a whole node (upstream's counting).
import type { GpuPool } from "./types.js";

/** Devices one pod claims, by driver. */
export type Claim = Readonly<Record<string, number>>;

interface Bucket {
  free: Record<string, number>;
  nodes: number;
}

export class PoolCapacity {
  private constructor(
    /** histogram: the report's buckets keyed by canonical vector; whole: undefined. */
    private readonly buckets: Map<string, Bucket> | undefined,
    private freeNodes: number,
  ) {}

  /** The pool's full capacity before any replica is charged. */
  static of(pool: GpuPool): PoolCapacity {
    if (!pool.nodesByFreeDevices) return new PoolCapacity(undefined, Math.max(0, pool.nodes));
    const buckets = new Map<string, Bucket>();
    let observed = 0;
    for (const b of pool.nodesByFreeDevices) {
      if (b.nodes > 0) add(buckets, b.freeDevices, b.nodes);
      observed += Math.max(0, b.nodes);
    }
    // Nodes the pool may still grow by start empty: every device of the pool free.
    const growth = pool.nodes - (pool.observedNodes ?? observed);
    if (growth > 0) {
      const full: Record<string, number> = {};
      for (const d of pool.devices) {
        if (d.claim === "DRA" && d.count > 0) full[d.driver] = (full[d.driver] ?? 0) + d.count;
      }
      add(buckets, full, growth);
    }
    return new PoolCapacity(buckets, 0);
  }

  get counting(): "devices" | "nodes" {
    return this.buckets ? "devices" : "nodes";
  }

  clone(): PoolCapacity {
    if (!this.buckets) return new PoolCapacity(undefined, this.freeNodes);
    const copy = new Map<string, Bucket>();
    for (const [k, b] of this.buckets) copy.set(k, { free: b.free, nodes: b.nodes });
    return new PoolCapacity(copy, 0);
  }

  /**
   * Charges `pods` pods claiming `claim` each. Returns false when some pod found no node; the
   * pods before it stay charged (callers try on a clone). `force` charges what does not fit
   * too, for replicas that already exist: an over-full pool then has no room left.
   */
  charge(claim: Claim, pods: number, force = false): boolean {
    const drivers = Object.keys(claim).filter((d) => claim[d]! > 0);
    if (drivers.length === 0 || pods <= 0) return true;
    if (!this.buckets) {
      const fits = this.freeNodes >= pods;
      if (fits || force) this.freeNodes = Math.max(0, this.freeNodes - pods);
      return fits;
    }
    for (let p = 0; p < pods; p++) {
      const key = this.pick(claim, drivers);
      if (key === undefined) {
        if (force) this.exhaust(drivers);
        return false;
      }
      const bucket = this.buckets.get(key)!;
      const free = { ...bucket.free };
      for (const d of drivers) free[d] = free[d]! - claim[d]!;
      take(this.buckets, key);
      add(this.buckets, free, 1);
    }
    return true;
  }

  /** Total free devices per driver and nodes left (for checks and reports). */
  totals(): { nodes: number; devices: Record<string, number> } {
    if (!this.buckets) return { nodes: this.freeNodes, devices: {} };
    const devices: Record<string, number> = {};
    let nodes = 0;
    for (const b of this.buckets.values()) {
      nodes += b.nodes;
      for (const [d, n] of Object.entries(b.free)) devices[d] = (devices[d] ?? 0) + n * b.nodes;
    }
    return { nodes, devices };
  }

  // The node with the most of the claimed devices free (the seed's binding assumption);
  // ties by the canonical vector so the choice never depends on insertion order.
  private pick(claim: Claim, drivers: readonly string[]): string | undefined {
    let best: string | undefined;
    let bestFree = -1;
    for (const [key, b] of this.buckets!) {
      let sum = 0;
      let fits = true;
      for (const d of drivers) {
        const f = b.free[d] ?? 0;
        if (f < claim[d]!) {
          fits = false;
          break;
        }
        sum += f;
      }
      if (fits && (sum > bestFree || (sum === bestFree && key < best!))) {
        best = key;
        bestFree = sum;
      }
    }
    return best;
  }

  // An existing pod that fits nowhere still runs somewhere (or waits): the devices it wants
  // count as gone, so nothing new is placed on top of it.
  private exhaust(drivers: readonly string[]): void {
    const entries = [...this.buckets!];
    this.buckets!.clear();
    for (const [, b] of entries) {
      const free = { ...b.free };
      for (const d of drivers) free[d] = 0;
      add(this.buckets!, free, b.nodes);
    }
  }
}

function canonical(free: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of Object.keys(free).sort()) if (free[d]! > 0) out[d] = free[d]!;
  return out;
}

function add(buckets: Map<string, Bucket>, free: Record<string, number>, nodes: number): void {
  const vector = canonical(free);
  const key = JSON.stringify(vector);
  const b = buckets.get(key);
  if (b) b.nodes += nodes;
  else buckets.set(key, { free: vector, nodes });
}

function take(buckets: Map<string, Bucket>, key: string): void {
  const b = buckets.get(key)!;
  if (b.nodes === 1) buckets.delete(key);
  else b.nodes -= 1;
}
