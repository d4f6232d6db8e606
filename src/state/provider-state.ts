// Provider state: the operator writes one value per provider (and, with the scoped layout, its
// offer key), every sidecar reads them through watched copies at most 200 ms old: the whole
// bucket, or its candidates' providers only (provider-state-copies.ts, docs/rules/state.md
// §10.1). Stale entries (lastProbedAt older than 5 minutes) are dropped; unreadable ones are
// skipped with a warning, once per revision.

import { PROVIDER_STALE_MS, type ProviderState } from "../core/index.js";
import type { Logger } from "../log/index.js";
import { decodeJson, encodeJson, type KvBucket, type KvEntry } from "./kv.js";
import type { BucketMirror } from "./mirror.js";
import { isOfferKey, offeredModels, offerJson, offerKey } from "./provider-offers.js";
import { isStale, parseProviderState, providerStateJson } from "./provider-state-codec.js";
import type { ProviderStateCopies } from "./provider-state-copies.js";
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
    // Offer keys share the bucket (provider-offers.ts): not a provider's state.
    if (isOfferKey(e.key)) return undefined;
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
  /**
   * Per-provider copies only: a read of these models, or of this provider, follows what it
   * needs first (the tickets copies decide which providers are followed, tickets-copies.ts).
   */
  interest?: (models: readonly string[]) => void;
  need?: (provider: string) => void;
}

/** Reads provider states (what the scheduler decides on). */
export class ProviderStateReader {
  private readonly staleMs: number;
  /** When (performance.now) this copy last saw each provider's state change. */
  private readonly changedAt = new Map<string, number>();

  constructor(
    private readonly source: ProviderStateCopies,
    private readonly options: ProviderStateReaderOptions,
  ) {
    this.staleMs = options.staleMs ?? PROVIDER_STALE_MS;
    // Only a change of the resident models matters to claims: a provider's first state, or a
    // new probe time alone, is no change.
    source.onChange((ev) => {
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

  /**
   * All current (non-stale) provider states followed here, read at most 200 ms old;
   * StateUnavailable when NATS is away. With `models` (a call's candidates), per-provider
   * copies first follow every provider that offers one.
   */
  async list(models?: readonly string[]): Promise<ProviderState[]> {
    if (models !== undefined) this.options.interest?.(models);
    await this.source.fresh();
    return this.peekAll();
  }

  /** One provider's current state, or undefined when unknown or stale. */
  async get(name: string): Promise<ProviderState | undefined> {
    await this.copyOf(name).fresh();
    return this.peek(name);
  }

  /**
   * Every provider's current state, fleet-wide (the proxy's model lists, never decisions): with
   * per-provider copies, one snapshot of the whole bucket read now (provider-state-copies.ts).
   */
  async fleet(): Promise<ProviderState[]> {
    const now = this.options.now();
    const out: ProviderState[] = [];
    for (const e of await this.source.snapshotAll()) {
      if (e.value !== undefined && !isStale(e.value, now, this.staleMs)) out.push(e.value);
    }
    return out;
  }

  /**
   * Every model some provider offers, fleet-wide: from the offer keys, else from the current
   * states. The proxy asks at every call, so the offer keys' set is built again only after
   * they changed, and is the same object until then.
   */
  offeredModels(): ReadonlySet<string> {
    if (!this.source.scoped) return new Set(this.peekAll().flatMap(offeredModels));
    const revision = this.source.catalog?.revision ?? 0;
    if (this.offered?.revision === revision) return this.offered.models;
    const models = new Set<string>();
    for (const o of this.source.offers()) for (const m of o.models) models.add(m);
    this.offered = { revision, models };
    return models;
  }

  private offered: { revision: number; models: ReadonlySet<string> } | undefined;

  /** The revision of a provider's state in the bucket itself, read now (one round trip). */
  headRevisionOf(name: string): Promise<number> {
    return this.copyOf(name).headOf(name);
  }

  /** A change counter of the states followed here: it moves whenever one changes. */
  get revision(): number {
    return this.source.revision;
  }

  /** The revision of a provider's state in the copy (0 = none). */
  revisionOf(name: string): number {
    return this.source.get(name)?.revision ?? 0;
  }

  /** Resolves true once the copy holds a provider's state at `revision` or later (false at the timeout). */
  waitForRevision(name: string, revision: number, timeoutMs: number): Promise<boolean> {
    return this.copyOf(name).waitFor(() => this.revisionOf(name) >= revision, timeoutMs);
  }

  /** Like `get` without the freshness check: for callers that just awaited `fresh()`. */
  peek(name: string): ProviderState | undefined {
    const s = this.source.get(name)?.value;
    return s !== undefined && !isStale(s, this.options.now(), this.staleMs) ? s : undefined;
  }

  peekAll(): ProviderState[] {
    const now = this.options.now();
    const out: ProviderState[] = [];
    for (const e of this.source.entries()) {
      if (e.value !== undefined && !isStale(e.value, now, this.staleMs)) out.push(e.value);
    }
    return out;
  }

  /**
   * Ensures the copies are at most 200 ms old (or `maxAgeMs`, when given and lower): those of
   * every provider followed here, or, with `provider`, that provider's only.
   */
  fresh(maxAgeMs?: number, provider?: string): Promise<void> {
    if (provider !== undefined) return this.copyOf(provider).fresh(Number.NEGATIVE_INFINITY, maxAgeMs);
    return this.source.fresh(maxAgeMs);
  }

  /** Monotonic time (performance.now) at which `provider`'s copy was last proven current. */
  confirmedAt(provider: string): number {
    return this.copyOf(provider).confirmedAt;
  }

  private copyOf(name: string): BucketMirror<ProviderState> {
    if (this.source.scoped) this.options.need?.(name);
    return this.source.copyOf(name);
  }
}

/**
 * Publishes provider states (the operator's provider reconciler). With `offers` (the scoped
 * layout, the default) each state's offer key is kept too: written after the state, and only
 * when the models offered change, so that readers of offers see no probe churn.
 */
export class ProviderStateWriter {
  /** The offer last written per provider (models joined), by this writer. */
  private readonly offered = new Map<string, string>();

  constructor(
    private readonly bucket: KvBucket,
    private readonly offers = true,
  ) {}

  /** Writes a provider's state under its name, with Kubemoot's field names; returns the revision. */
  async publish(state: ProviderState): Promise<number> {
    assertProviderName(state.name, "name");
    const revision = await this.bucket.put(state.name, encodeJson(providerStateJson(state)));
    if (this.offers) {
      const models = offeredModels(state);
      const joined = models.join("\n");
      if (this.offered.get(state.name) !== joined) {
        await this.bucket.put(offerKey(state.name), encodeJson(offerJson({ provider: state.name, models })));
        this.offered.set(state.name, joined);
      }
    }
    return revision;
  }

  /** Removes a provider (its ModelProvider was deleted); returns the tombstone's revision. */
  async remove(name: string): Promise<number> {
    assertProviderName(name, "name");
    if (this.offers) {
      await this.bucket.delete(offerKey(name));
      this.offered.delete(name);
    }
    return this.bucket.delete(name);
  }
}

function residentSet(s: ProviderState | undefined): string {
  if (s === undefined) return "";
  return [...new Set([...(s.loadedModels ?? []), ...Object.keys(s.loadedModelFootprintsMiB ?? {})])]
    .sort()
    .join("\n");
}
