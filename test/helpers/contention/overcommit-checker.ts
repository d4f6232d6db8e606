// An independent no-overcommit checker for the tickets bucket: fed every change in revision
// order, it recomputes each touched provider's budget from scratch (its own arithmetic, not
// src/core's) and records a violation whenever committed VRAM exceeds usable + victim credit:
//   resident (per model max(published, overlay), once) + Σ in-flight cold loads (once per
//   model, models not resident) ≤ usable(total) + Σ resident victims planned by live tickets.
// Every present ticket counts as live (stricter than leases; tests use long leases), and so does
// every ticket the provider's current guard lists whose key has not appeared yet: a decided
// ticket exists from its guard's commit on, and is carried by later guards until its holder
// writes it (docs/rules/state.md §6, step 3).
import { kvUntoken } from "../../../src/core/index.js";

export interface CheckedState {
  name: string;
  totalVramMiB: number;
  loadedModelFootprintsMiB: Record<string, number>;
}

export interface Violation {
  revision: number;
  provider: string;
  committedMiB: number;
  allowedMiB: number;
  tickets: string[];
}

interface T {
  model: string;
  footprint: number;
  evicts: string[];
}

const decoder = new TextDecoder();

/** The map under `key` of a map of maps, created when absent. */
function inner<K, V>(outer: Map<string, Map<K, V>>, key: string): Map<K, V> {
  let m = outer.get(key);
  if (m === undefined) {
    m = new Map();
    outer.set(key, m);
  }
  return m;
}

export function usable(total: number): number {
  if (!(total > 0)) return 0;
  return Math.max(0, total - Math.max(2048, Math.floor(0.12 * total)));
}

export class OvercommitChecker {
  readonly violations: Violation[] = [];
  revisionsChecked = 0;
  lastRevision = 0;
  private readonly tickets = new Map<string, Map<string, T>>();
  /** provider → overlay key → (model, MiB) */
  private readonly overlays = new Map<string, Map<string, { model: string; mib: number }>>();
  /** The provider each ticket or overlay key was written for. */
  private readonly providerOfKey = new Map<string, string>();
  /**
   * provider → the current guard's pending tickets (by id): decided, and counted until their
   * key shows up (written, or deleted before it was: docs/rules/state.md §6, step 3).
   */
  private readonly pending = new Map<string, Map<string, T>>();
  /** Ids of tickets whose key has appeared (a value or a tombstone). */
  private readonly seenIds = new Set<string>();

  constructor(private readonly states: Map<string, CheckedState>) {}

  /** Feeds one change of the tickets bucket (in revision order). */
  apply(key: string, operation: string, value: Uint8Array, revision: number): void {
    this.lastRevision = revision;
    const provider = this.touch(key, operation, value);
    this.revisionsChecked++;
    if (provider !== undefined) this.check(provider, revision);
  }

  /** Committed and allowed MiB of a provider now. */
  budget(provider: string): { committed: number; allowed: number; resident: Map<string, number> } {
    const s = this.states.get(provider);
    const resident = new Map<string, number>();
    for (const [m, mib] of Object.entries(s?.loadedModelFootprintsMiB ?? {})) resident.set(m, mib);
    for (const { model, mib } of this.overlays.get(provider)?.values() ?? []) {
      resident.set(model, Math.max(resident.get(model) ?? 0, mib));
    }
    let committed = 0;
    for (const mib of resident.values()) committed += mib;
    const loads = new Map<string, number>();
    const victims = new Set<string>();
    const unwritten = [...(this.pending.get(provider) ?? new Map<string, T>())]
      .filter(([id]) => !this.seenIds.has(id))
      .map(([, t]) => t);
    for (const t of [...(this.tickets.get(provider)?.values() ?? []), ...unwritten]) {
      for (const v of t.evicts) if (resident.has(v)) victims.add(v);
      if (!resident.has(t.model)) loads.set(t.model, Math.max(loads.get(t.model) ?? 0, t.footprint));
    }
    for (const mib of loads.values()) committed += mib;
    let credit = 0;
    for (const v of victims) credit += resident.get(v) ?? 0;
    return { committed, allowed: usable(s?.totalVramMiB ?? 0) + credit, resident };
  }

  /** Live ticket keys of a provider. */
  ticketKeys(provider: string): string[] {
    return [...(this.tickets.get(provider)?.keys() ?? [])];
  }

  private check(provider: string, revision: number): void {
    if (!this.states.has(provider)) return;
    const { committed, allowed } = this.budget(provider);
    if (committed > allowed) {
      this.violations.push({
        revision,
        provider,
        committedMiB: committed,
        allowedMiB: allowed,
        tickets: this.ticketKeys(provider),
      });
    }
  }

  private touch(key: string, operation: string, value: Uint8Array): string | undefined {
    const k = classifyTicketsKey(key);
    if (k.kind === "guard") return this.touchGuard(k.id, operation, value);
    if (k.kind === "other") return undefined;
    if (k.kind === "ticket") this.seenIds.add(k.id);
    // The provider comes from the value (both layouts carry it); a delete finds it by key.
    let provider = this.providerOfKey.get(key);
    if (operation !== "PUT") {
      if (provider !== undefined) {
        if (k.kind === "residency") this.overlays.get(provider)?.delete(key);
        else this.tickets.get(provider)?.delete(key);
      }
      return provider;
    }
    let v: {
      provider?: string;
      modelName?: string;
      modelFootprintMiB?: number;
      evicts?: Record<string, number>;
    };
    try {
      v = JSON.parse(decoder.decode(value));
    } catch {
      return undefined;
    }
    provider = String(v.provider ?? "");
    if (provider === "") return undefined;
    this.providerOfKey.set(key, provider);
    if (k.kind === "residency") {
      inner(this.overlays, provider).set(key, {
        model: String(v.modelName),
        mib: Number(v.modelFootprintMiB),
      });
    } else {
      inner(this.tickets, provider).set(key, {
        model: String(v.modelName ?? ""),
        footprint: Number(v.modelFootprintMiB ?? 0),
        evicts: Object.keys(v.evicts ?? {}),
      });
    }
    return provider;
  }

  /** A guard's new pending list replaces its provider's (a delete or an unreadable one empties it). */
  private touchGuard(provider: string, operation: string, value: Uint8Array): string | undefined {
    let v: {
      pending?: {
        ticketId?: string;
        provider?: string;
        modelName?: string;
        modelFootprintMiB?: number;
        evicts?: Record<string, number>;
      }[];
    };
    try {
      v = operation === "PUT" ? JSON.parse(decoder.decode(value)) : {};
    } catch {
      v = {};
    }
    const list = Array.isArray(v.pending) ? v.pending : [];
    const m = new Map<string, T>();
    for (const t of list) {
      m.set(String(t.ticketId), {
        model: String(t.modelName ?? ""),
        footprint: Number(t.modelFootprintMiB ?? 0),
        evicts: Object.keys(t.evicts ?? {}),
      });
    }
    this.pending.set(provider, m);
    return provider;
  }
}

/**
 * What a tickets-bucket key is, in either layout (docs/rules/state.md §2.2, §2.4), read here
 * without the state layer's parser so that the checker stays independent of it.
 */
export function classifyTicketsKey(key: string): {
  kind: "ticket" | "residency" | "guard" | "other";
  id: string;
} {
  // A guard's id is its provider.
  if (key.startsWith("_claim__")) return { kind: "guard", id: key.slice("_claim__".length) };
  const g = /^g\.([^.]+)\.claim$/.exec(key);
  if (g !== null) return { kind: "guard", id: kvUntoken(g[1]!) ?? "" };
  if (key.startsWith("_")) return { kind: "other", id: "" };
  if (key.startsWith("residency__")) return { kind: "residency", id: key };
  const i = key.indexOf("__");
  if (i > 0) return { kind: "ticket", id: key.slice(i + 2) };
  const t = key.split(".");
  if (t[0] === "t" && t.length === 4) return { kind: "ticket", id: t[3]! };
  if (t[0] === "r" && t.length === 3) return { kind: "residency", id: key };
  return { kind: "other", id: "" };
}

/** A refusal as a claim worker reports it: the view it decided on. */
export interface RefusalRecord {
  reason: string;
  provider: string;
  model: string;
  footprint: number;
  /** Tickets-bucket revision of the deciding read. */
  revision: number;
  /** The tickets that decision counted: [ticketId, model, MiB]. */
  counted: [string, string, number][];
}

/**
 * Refusals that were not justified by the state at the revision they were decided on: the
 * decision counted a ticket already released by then, or the claim fit after all. Such a
 * claim "found room but never won" (a starved claim).
 */
export function unjustifiedRefusals(
  refusals: readonly RefusalRecord[],
  states: ReadonlyMap<string, CheckedState>,
  deletedAt: ReadonlyMap<string, number>,
): RefusalRecord[] {
  const out: RefusalRecord[] = [];
  for (const r of refusals) {
    if (r.reason !== "no-room") {
      out.push(r);
      continue;
    }
    const s = states.get(r.provider);
    if (s === undefined) {
      out.push(r);
      continue;
    }
    const resident = new Map(Object.entries(s.loadedModelFootprintsMiB));
    const phantom = r.counted.some(([id]) => (deletedAt.get(id) ?? Number.POSITIVE_INFINITY) <= r.revision);
    const loads = new Map<string, number>();
    for (const [, model, mib] of r.counted) {
      if (!resident.has(model)) loads.set(model, Math.max(loads.get(model) ?? 0, mib));
    }
    let committed = 0;
    for (const mib of resident.values()) committed += mib;
    for (const mib of loads.values()) committed += mib;
    const fits =
      resident.has(r.model) || loads.has(r.model) || committed + r.footprint <= usable(s.totalVramMiB);
    if (phantom || fits) out.push(r);
  }
  return out;
}
