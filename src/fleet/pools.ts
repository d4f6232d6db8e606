// A cluster as the placer sees it: pools in published order with their devices resolved
// (a pool listing none takes its InferenceClass's) and their fabric domain, plus per-member
// matches cached across deployments that share a member's device requests.
import { type MemberMatch, matchMember } from "./match.js";
import type { Device, GpuPool, InferenceClass, InferenceCluster, Member } from "./types.js";

export interface PoolView {
  pool: GpuPool;
  index: number;
  devices: readonly Device[];
  /** Equal device lists share an id (matches are cached by it). */
  devicesId: number;
  /** The pool's value at the cluster's fabric level; undefined: a fabric of its own. */
  fabric: string | undefined;
}

export interface ClusterView {
  cluster: InferenceCluster;
  pools: PoolView[];
  poolByName: Map<string, PoolView>;
}

export function clusterView(
  cluster: InferenceCluster,
  classes: ReadonlyMap<string, InferenceClass>,
): ClusterView {
  const pools: PoolView[] = [];
  const poolByName = new Map<string, PoolView>();
  for (const pool of cluster.pools) {
    if (poolByName.has(pool.name)) continue; // the first of a duplicated name wins
    const fromClass = pool.inferenceClassName ? classes.get(pool.inferenceClassName)?.devices : undefined;
    const devices = pool.devices.length > 0 ? pool.devices : (fromClass ?? []);
    const fabric = cluster.fabricLevel ? pool.topology?.[cluster.fabricLevel] : undefined;
    const view: PoolView = {
      pool,
      index: pools.length,
      devices,
      devicesId: devicesId(devices),
      fabric: fabric || undefined,
    };
    pools.push(view);
    poolByName.set(pool.name, view);
  }
  return { cluster, pools, poolByName };
}

/** Two pools may hold one engine together only when both declare the same fabric domain. */
export function sameFabric(a: PoolView, b: PoolView): boolean {
  return a === b || (a.fabric !== undefined && a.fabric === b.fabric);
}

// Member matches depend only on the member's requests and the pool's devices, so both are
// interned by content and a match is computed once per (requests, devices) for the life of the
// process: fleets have few GPU kinds and deployments repeat their requests. Ids are never
// reused, so clearing the tables (bounded size) only costs recomputation.
let nextId = 1;
const DEVICE_LISTS = new Map<string, number>();
const REQUESTS = new Map<string, number>();
const MEMBER_IDS = new WeakMap<Member, number>();
const MATCHES = new Map<number, Map<number, MemberMatch | null>>();
const MAX_ENTRIES = 100_000;

function intern(table: Map<string, number>, key: string): number {
  let id = table.get(key);
  if (id === undefined) {
    if (table.size >= MAX_ENTRIES) table.clear();
    id = nextId++;
    table.set(key, id);
  }
  return id;
}

function devicesId(devices: readonly Device[]): number {
  return intern(DEVICE_LISTS, JSON.stringify(devices));
}

function memberId(member: Member): number {
  let id = MEMBER_IDS.get(member);
  if (id === undefined) {
    id = intern(REQUESTS, member.devices ? JSON.stringify(member.devices) : "");
    MEMBER_IDS.set(member, id);
  }
  return id;
}

export function memberMatch(member: Member, pool: PoolView): MemberMatch | undefined {
  const id = memberId(member);
  let byDevices = MATCHES.get(id);
  if (!byDevices) {
    if (MATCHES.size >= MAX_ENTRIES) MATCHES.clear();
    byDevices = new Map();
    MATCHES.set(id, byDevices);
  }
  let m = byDevices.get(pool.devicesId);
  if (m === undefined) {
    m = matchMember(member, pool.devices) ?? null;
    byDevices.set(pool.devicesId, m);
  }
  return m ?? undefined;
}

/** Forgets every cached match (benchmarks measure a cold start with it). */
export function clearMatches(): void {
  DEVICE_LISTS.clear();
  REQUESTS.clear();
  MATCHES.clear();
}
