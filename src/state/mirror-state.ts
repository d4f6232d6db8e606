// One bucket's copy as a mirror holds it (mirror.ts): the last value of every key, the
// tombstones of deleted keys, an optional secondary index by group, and the newest revision
// applied. A mirror swaps a whole new one in when it rebuilds from a snapshot.
import type { KvEntry } from "./kv.js";

/** A key's last value as the mirror holds it. */
export interface MirrorEntry<T> {
  readonly key: string;
  readonly revision: number;
  /** When the server stored it (epoch ms). */
  readonly createdMs: number;
  /** Decoded value; undefined when the value could not be decoded (the entry is skipped). */
  readonly value: T | undefined;
}

/** What the mirror last saw of a key: a value or a tombstone. */
export interface SeenKey {
  readonly revision: number;
  readonly deleted: boolean;
}

export type MirrorEvent<T> =
  | { type: "put"; entry: MirrorEntry<T> }
  | { type: "delete"; key: string; revision: number }
  /** The whole copy was replaced by a new snapshot (after a reconnect). */
  | { type: "reset" }
  | { type: "availability"; available: boolean };

/**
 * Tombstones a copy may forget before the bucket's TTL: once `keepMs` old (by the server's
 * clock), each one `needed` answers false for.
 */
export interface EarlyForget {
  readonly keepMs: number;
  readonly needed: (key: string) => boolean;
}

export class MirrorState<T> {
  readonly live = new Map<string, MirrorEntry<T>>();
  readonly tombs = new Map<string, { revision: number; createdMs: number }>();
  readonly groups = new Map<string, Map<string, MirrorEntry<T>>>();
  revision = 0;

  constructor(
    private readonly groupOf: ((key: string) => string | undefined) | undefined,
    private readonly decode: (entry: KvEntry) => T | undefined,
  ) {}

  /** Applies one watch entry; returns the event to publish, or null when it was old news. */
  apply(e: KvEntry): MirrorEvent<T> | null {
    if (e.revision <= this.revision) return null;
    this.revision = e.revision;
    const g = this.groupOf?.(e.key);
    if (e.operation === "PUT") {
      const entry: MirrorEntry<T> = {
        key: e.key,
        revision: e.revision,
        createdMs: e.createdMs,
        value: this.decode(e),
      };
      this.tombs.delete(e.key);
      this.live.set(e.key, entry);
      if (g !== undefined) {
        let m = this.groups.get(g);
        if (m === undefined) {
          m = new Map();
          this.groups.set(g, m);
        }
        m.set(e.key, entry);
      }
      return { type: "put", entry };
    }
    this.live.delete(e.key);
    if (g !== undefined) this.groups.get(g)?.delete(e.key);
    this.tombs.set(e.key, { revision: e.revision, createdMs: e.createdMs });
    return { type: "delete", key: e.key, revision: e.revision };
  }

  /**
   * Forgets entries the server has dropped by now (TTL), very old tombstones, and the
   * tombstones `early` lets go.
   */
  prune(nowMs: number, ttlMs: number, early?: EarlyForget): void {
    const keepTombMs = ttlMs > 0 ? ttlMs : 3_600_000;
    for (const [k, t] of this.tombs) {
      if (
        t.createdMs + keepTombMs <= nowMs ||
        (early !== undefined && t.createdMs + early.keepMs <= nowMs && !early.needed(k))
      ) {
        this.tombs.delete(k);
      }
    }
    if (!(ttlMs > 0)) return;
    for (const [k, e] of this.live) {
      if (e.createdMs + ttlMs > nowMs) continue;
      this.live.delete(k);
      const g = this.groupOf?.(k);
      if (g !== undefined) this.groups.get(g)?.delete(k);
    }
  }
}
