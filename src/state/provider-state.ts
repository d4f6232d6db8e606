// Provider state: the operator writes one value per provider, every sidecar reads them through
// a watched copy at most 200 ms old. Stale entries (lastProbedAt older than 5 minutes) are
// dropped; unreadable ones are skipped with a warning, once per revision.

import { PROVIDER_STALE_MS, type ProviderState } from "../core/index.js";
import type { Logger } from "../log/index.js";
import { decodeJson, encodeJson, type KvBucket, type KvEntry } from "./kv.js";
import type { BucketMirror } from "./mirror.js";
import { isStale, parseProviderState, providerStateJson } from "./provider-state-codec.js";
import { assertProviderName } from "./ticket-keys.js";

/**
 * Whether a reader accepts a provider state (e.g. its endpoint is on the allowlist); a refused
 * entry is kept out of the copy as if unreadable, so nothing that reads the copy ever sees it.
 * Called once per entry revision the watch delivers (again after a resync).
 */
export type ProviderStateFilter = (state: ProviderState, at: { key: string; revision: number }) => boolean;

/** The mirror decoder of provider state entries. */
export function providerStateDecoder(
  logger: Logger,
  accept?: ProviderStateFilter,
): (e: KvEntry) => ProviderState | undefined {
  return (e) => {
    let raw: unknown;
    try {
      raw = decodeJson(e.value);
    } catch (err) {
      logger.warn({ key: e.key, revision: e.revision, err }, "state: skipping unreadable provider state");
      return undefined;
    }
    const s = parseProviderState(raw, e.key);
    if (s === undefined) {
      logger.warn(
        { key: e.key, revision: e.revision },
        "state: skipping provider state that is not an object",
      );
      return undefined;
    }
    return accept === undefined || accept(s, { key: e.key, revision: e.revision }) ? s : undefined;
  };
}

export interface ProviderStateReaderOptions {
  /** Wall clock (epoch ms). */
  now: () => number;
  /** Entries probed longer ago than this are ignored (ms); default 5 minutes. */
  staleMs?: number;
}

/** Reads provider states (what the scheduler decides on). */
export class ProviderStateReader {
  private readonly staleMs: number;
  /** When (performance.now) this copy last saw each provider's state change. */
  private readonly changedAt = new Map<string, number>();

  constructor(
    private readonly mirror: BucketMirror<ProviderState>,
    private readonly options: ProviderStateReaderOptions,
  ) {
    this.staleMs = options.staleMs ?? PROVIDER_STALE_MS;
    // Only a change of the resident models matters to claims: a provider's first state, or a
    // new probe time alone, is no change.
    mirror.onChange((ev) => {
      if (ev.type !== "put") return;
      const next = residentSet(ev.entry.value);
      const prev = this.residents.get(ev.entry.key);
      this.residents.set(ev.entry.key, next);
      if (prev !== undefined && prev !== next) this.changedAt.set(ev.entry.key, performance.now());
    });
  }

  /** The resident models of each provider as last seen, as one sorted string. */
  private readonly residents = new Map<string, string>();

  /**
   * When this copy last saw the provider's resident models change (performance.now); undefined
   * if never.
   */
  lastChangeSeen(name: string): number | undefined {
    return this.changedAt.get(name);
  }

  /** All current (non-stale) provider states, read at most 200 ms old; StateUnavailable when NATS is away. */
  async list(): Promise<ProviderState[]> {
    await this.mirror.fresh();
    return this.peekAll();
  }

  /** One provider's current state, or undefined when unknown or stale. */
  async get(name: string): Promise<ProviderState | undefined> {
    await this.mirror.fresh();
    return this.peek(name);
  }

  /** Like `get` without the freshness check: for callers that just awaited `fresh()`. */
  /** The revision of a provider's state in the bucket itself, read now (one round trip). */
  headRevisionOf(name: string): Promise<number> {
    return this.mirror.headOf(name);
  }

  /** The newest revision the copy holds (any provider's): it moves whenever a state changes. */
  get revision(): number {
    return this.mirror.revision;
  }

  /** The revision of a provider's state in the copy (0 = none). */
  revisionOf(name: string): number {
    return this.mirror.get(name)?.revision ?? 0;
  }

  /** Resolves true once the copy holds a provider's state at `revision` or later (false at the timeout). */
  waitForRevision(name: string, revision: number, timeoutMs: number): Promise<boolean> {
    return this.mirror.waitFor(() => this.revisionOf(name) >= revision, timeoutMs);
  }

  peek(name: string): ProviderState | undefined {
    const s = this.mirror.get(name)?.value;
    return s !== undefined && !isStale(s, this.options.now(), this.staleMs) ? s : undefined;
  }

  peekAll(): ProviderState[] {
    const now = this.options.now();
    const out: ProviderState[] = [];
    for (const e of this.mirror.entries()) {
      if (e.value !== undefined && !isStale(e.value, now, this.staleMs)) out.push(e.value);
    }
    return out;
  }

  /** Ensures the copy is at most 200 ms old (or `maxAgeMs`, when given and lower). */
  fresh(maxAgeMs?: number): Promise<void> {
    return this.mirror.fresh(Number.NEGATIVE_INFINITY, maxAgeMs);
  }

  /** Monotonic time (performance.now) at which the copy was last proven current. */
  get confirmedAt(): number {
    return this.mirror.confirmedAt;
  }
}

/** Publishes provider states (the operator's provider reconciler). */
export class ProviderStateWriter {
  constructor(private readonly bucket: KvBucket) {}

  /** Writes a provider's state under its name, with Kubemoot's field names; returns the revision. */
  publish(state: ProviderState): Promise<number> {
    assertProviderName(state.name, "name");
    return this.bucket.put(state.name, encodeJson(providerStateJson(state)));
  }

  /** Removes a provider (its ModelProvider was deleted); returns the tombstone's revision. */
  remove(name: string): Promise<number> {
    assertProviderName(name, "name");
    return this.bucket.delete(name);
  }
}

function residentSet(s: ProviderState | undefined): string {
  if (s === undefined) return "";
  return [...new Set([...(s.loadedModels ?? []), ...Object.keys(s.loadedModelFootprintsMiB ?? {})])]
    .sort()
    .join("\n");
}
