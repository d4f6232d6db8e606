// One engine onto pools of one cluster (docs/rules/fleet.md rule 4): the first pool in pool order
// where every member matches, no member that could claim somewhere on the cluster is left
// with only Synthetic matches, and the engine's pods fit. Beyond upstream: when no single pool
// holds it, the engine may span the pools of one declared fabric domain, member by member.
import type { PoolCapacity } from "./capacity.js";
import { memberPods } from "./ledger.js";
import { claims, type MemberMatch } from "./match.js";
import { type ClusterView, memberMatch, type PoolView } from "./pools.js";
import type { Engine, Member } from "./types.js";

export interface MemberPlacement {
  pool: PoolView;
  match: MemberMatch;
}

/** Pool capacities being charged for one replica, copied from the ledger on first use. */
export interface WorkingPools {
  get(pool: PoolView): PoolCapacity;
  set(pool: PoolView, capacity: PoolCapacity): void;
}

/**
 * The engine's usable matches on a cluster, `[member][pool index]`: undefined where the member
 * does not match, or matches only Synthetic devices while it claims somewhere on the cluster.
 */
export type EngineMatches = readonly (readonly (MemberMatch | undefined)[])[];

export function engineMatches(engine: Engine, view: ClusterView): EngineMatches {
  return engine.members.map((member) => {
    const row = view.pools.map((pool) => memberMatch(member, pool));
    const mustClaim = row.some((m) => m !== undefined && claims(m));
    return mustClaim ? row.map((m) => (m && claims(m) ? m : undefined)) : row;
  });
}

/** Whether some member of the engine claims somewhere on the cluster. */
export function engineClaims(engine: Engine, view: ClusterView): boolean {
  for (const member of engine.members) {
    for (const pool of view.pools) {
      const m = memberMatch(member, pool);
      if (m !== undefined && claims(m)) return true;
    }
  }
  return false;
}

function chargeMember(cap: PoolCapacity, member: Member, match: MemberMatch, copies: number): boolean {
  if (!claims(match)) return true;
  return cap.charge(match.claim, memberPods(member.role, member.workerNodes) * copies);
}

/**
 * Places the engine, charging `working`; undefined (and `working` untouched) when it fits
 * nowhere. `table` holds the usable matches (engineMatches).
 */
export function placeEngine(
  engine: Engine,
  view: ClusterView,
  table: EngineMatches,
  working: WorkingPools,
): MemberPlacement[] | undefined {
  for (const pool of view.pools) {
    if (requiredDomain(engine, pool) === null) continue;
    if (table.some((row) => row[pool.index] === undefined)) continue;
    const cap = working.get(pool).clone();
    if (engine.members.every((m, j) => chargeMember(cap, m, table[j]![pool.index]!, engine.copies))) {
      working.set(pool, cap);
      return table.map((row) => ({ pool, match: row[pool.index]! }));
    }
  }
  return spanFabric(engine, view, table, working);
}

/**
 * The pool's domain at the engine's `topology.requiredLevel` (docs/rules/topology.md): undefined when
 * the engine requires none; null when the pool declares no value at that level — locality is
 * read from what the platform publishes (the pool's `topology`), never guessed, so such a pool
 * cannot hold an engine that requires it.
 */
export function requiredDomain(engine: Engine, pool: PoolView): string | undefined | null {
  const level = engine.requiredLevel;
  if (level === undefined) return undefined;
  const value = pool.pool.topology?.[level];
  return value ? value : null;
}

// Members in order, each onto the first pool of the domain that matches it and has room;
// domains in the order of their first pool. A member's pods never split: a member carries one pool.
function spanFabric(
  engine: Engine,
  view: ClusterView,
  table: EngineMatches,
  working: WorkingPools,
): MemberPlacement[] | undefined {
  const domains = new Map<string, PoolView[]>();
  for (const pool of view.pools) {
    if (pool.fabric === undefined) continue;
    const at = requiredDomain(engine, pool);
    if (at === null) continue;
    // With a required level, pools of one fabric also share one domain at that level.
    const key = at === undefined ? pool.fabric : `${pool.fabric}\u0000${at}`;
    const list = domains.get(key);
    if (list) list.push(pool);
    else domains.set(key, [pool]);
  }
  for (const pools of domains.values()) {
    if (pools.length < 2) continue;
    const caps = new Map<PoolView, PoolCapacity>();
    const placed: MemberPlacement[] = [];
    for (const [j, member] of engine.members.entries()) {
      for (const pool of pools) {
        const match = table[j]![pool.index];
        if (!match) continue;
        const cap = (caps.get(pool) ?? working.get(pool)).clone();
        if (!chargeMember(cap, member, match, engine.copies)) continue;
        caps.set(pool, cap);
        placed.push({ pool, match });
        break;
      }
      if (placed.length === j) break; // this member fits nowhere in the domain
    }
    if (placed.length === engine.members.length) {
      for (const [pool, cap] of caps) working.set(pool, cap);
      return placed;
    }
  }
  return undefined;
}
