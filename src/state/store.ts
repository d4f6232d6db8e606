// Opens the shared state: the three buckets, their watched copies, and the services the
// sidecar and the operator call (provider state, tickets, demand, capacity watch).
import os from "node:os";
import { FRESH_READ_MS, PROVIDER_STALE_MS, TICKET_LEASE_S } from "../core/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { type Logger, silentLogger } from "../log/index.js";
import { BUCKETS_OF, bucketSettings, MODEL_DEMAND_BUCKET } from "./buckets.js";
import { CapacityWatch } from "./capacity-watch.js";
import {
  CATCH_UP_TIMEOUT_MS,
  CLAIM_MAX_ATTEMPTS,
  LEASE_GRACE_MS,
  TICKET_TOMBSTONE_KEEP_MS,
} from "./defaults.js";
import { DemandBoard, demandDecoder } from "./demand.js";
import { DemandCopies, type DemandScope } from "./demand-copies.js";
import type { BucketSettings, KvBucket, KvStore } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { BucketMirror } from "./mirror.js";
import { connectNatsKv, type NatsKvOptions } from "./nats-kv.js";
import { offerDecoder } from "./provider-offers.js";
import {
  type ProviderStateFilter,
  ProviderStateReader,
  ProviderStateWriter,
  providerStateDecoder,
} from "./provider-state.js";
import { ProviderStateCopies } from "./provider-state-copies.js";
import { type KeyLayoutName, keyLayout } from "./ticket-keys.js";
import { TicketBook } from "./tickets.js";
import { TicketsCopies, type TicketsScope } from "./tickets-copies.js";
import { type TicketsMirror, ticketsDecoder, ticketsGroup, tombstoneNeeded } from "./tickets-view.js";

/** Counters since the store opened, and what it follows now. */
export interface StateStats {
  casConflicts: number;
  /** Entries the watches delivered, per bucket: what following the shared state costs. */
  readonly watchEntries: Record<string, number>;
  /** Providers whose tickets this process follows one by one (none when it follows them all). */
  readonly followedProviders: () => number;
  /** Models whose demand this process follows one by one (none when it follows it all, §10.2). */
  readonly followedModels: () => number;
}

export interface StateStoreOptions {
  /** Written into every ticket's holderId; default "<hostname>/<pid>". */
  holderId?: string;
  /** Wall clock (epoch ms) for leases, staleness and demand expiry; default Date.now. */
  now?: () => number;
  /** pino or anything with the same debug/info/warn/error methods. */
  logger?: Logger;
  /** Bucket replicas in a NATS cluster (1, 3 or 5); default 1. Used when a bucket is created. */
  replicas?: number;
  /** Ticket lease (ms); default 150 000 (the sidecar passes KUBEMOOT_TICKET_LEASE_SECONDS). */
  ticketLeaseMs?: number;
  /** How long after its expiresAt a ticket still counts (ms); default 1000. */
  leaseGraceMs?: number;
  /** Maximum age of the state a decision reads (ms); default 200. */
  freshnessMs?: number;
  /** How long a read waits for a watch to catch up or come back (ms); default 2000. */
  catchUpTimeoutMs?: number;
  /**
   * How long opening waits for each bucket's first snapshot (ms); default `catchUpTimeoutMs`.
   * A caller that retries a failed open may lengthen it (sidecar/open-state.ts).
   */
  firstSnapshotTimeoutMs?: number;
  /**
   * How long the tickets copy keeps the tombstone of a released ticket no guard lists (ms);
   * default 10 000. Other tombstones stay for the bucket's TTL.
   */
  ticketTombstoneKeepMs?: number;
  /** Watched entries each copy applies between two prunes of what it may forget; default 1024. */
  mirrorPruneEvery?: number;
  /** Compare-and-set attempts per claim; default 64. */
  claimMaxAttempts?: number;
  /** Claims decided in one compare-and-set (same provider, this process); default 16. */
  claimBatch?: number;
  /** Provider states probed longer ago than this are ignored (ms); default 5 minutes. */
  providerStaleMs?: number;
  /**
   * How long opening may keep retrying while the server is reachable but JetStream cannot serve
   * yet (a cluster electing its leaders) (ms); default 15000.
   */
  openTimeoutMs?: number;
  /** Provider states this reader refuses are left out of its copy (the endpoint allowlist). */
  acceptProvider?: ProviderStateFilter;
  /**
   * Key layout of the tickets and demand buckets (docs/rules/state.md §2.4): "scoped" (the
   * default) or "kubemoot" (Kubemoot's own keys, to share buckets with its runtime).
   */
  keyLayout?: KeyLayoutName;
  /**
   * Which tickets this process follows (docs/rules/state.md §10.1): "all" (the default: one copy
   * of the whole bucket) or "candidates" (with the scoped layout, one filtered copy per provider
   * its calls can use).
   */
  ticketsScope?: TicketsScope;
  /**
   * Which demand this process follows (docs/rules/state.md §10.2): "all" (one copy of the whole
   * bucket) or "candidates" (with the scoped layout, one filtered copy per model its decisions
   * weigh, plus the selection rates); default: as `ticketsScope`.
   */
  demandScope?: DemandScope;
  /** Connection settings when the target is a NATS URL. */
  nats?: Omit<NatsKvOptions, "servers">;
}

export interface StateStore {
  readonly kind: "memory" | "nats";
  /** The underlying KV store (shared by an embedded operator and scheduler). */
  readonly kv: KvStore;
  /** Provider states, read at most 200 ms old. */
  readonly providers: ProviderStateReader;
  /** Provider state publishing (the operator). */
  readonly providerWriter: ProviderStateWriter;
  readonly tickets: TicketBook;
  readonly demand: DemandBoard;
  readonly capacity: CapacityWatch;
  /** True while every watch is established (NATS reachable). */
  readonly available: boolean;
  /** Counters since the store opened. */
  readonly stats: StateStats;
  close(): Promise<void>;
}

/**
 * Opens the shared state on `target`: "memory" (the embedded store), a NATS URL or several
 * (a cluster), or an existing KvStore (e.g. one MemoryKvStore shared by the embedded operator
 * and scheduler; it is not closed with the returned store). Rejects with StateUnavailable when
 * NATS cannot be reached.
 */
export async function openStateStore(
  target: "memory" | string | string[] | KvStore,
  options: StateStoreOptions = {},
): Promise<StateStore> {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  let kv: KvStore;
  let owned = true;
  if (typeof target === "object" && !Array.isArray(target)) {
    kv = target;
    owned = false;
  } else if (target === "memory") {
    kv = new MemoryKvStore({ now });
  } else {
    kv = await connectNatsKv({ ...options.nats, servers: target });
  }
  try {
    return await assemble(kv, owned, now, logger, options);
  } catch (err) {
    if (owned) await kv.close();
    throw err;
  }
}

async function assemble(
  kv: KvStore,
  owned: boolean,
  now: () => number,
  logger: Logger,
  options: StateStoreOptions,
): Promise<StateStore> {
  const settings = bucketSettings(options.replicas ?? 1);
  const holderId = options.holderId ?? `${os.hostname()}/${process.pid}`;
  const keys = keyLayout(options.keyLayout ?? "scoped", holderId);
  const [stateBucket, ticketsBucket, demandBucket] = await Promise.all(
    BUCKETS_OF.map((name) => openBucket(kv, name, settings[name]!, options.openTimeoutMs ?? 15_000)),
  );
  const watchEntries: Record<string, number> = Object.fromEntries(BUCKETS_OF.map((b) => [b, 0]));
  const counting = (bucket: string) => () => {
    watchEntries[bucket] = (watchEntries[bucket] ?? 0) + 1;
  };
  const mirrorBase = {
    connection: kv.connection,
    now,
    freshnessMs: options.freshnessMs ?? FRESH_READ_MS,
    catchUpTimeoutMs: options.catchUpTimeoutMs ?? CATCH_UP_TIMEOUT_MS,
    ...(options.mirrorPruneEvery !== undefined ? { pruneEvery: options.mirrorPruneEvery } : {}),
    logger,
  };
  // Per provider only where the tickets are too (tickets-copies.ts) and the layout has offers.
  const ticketsScope = options.ticketsScope ?? "all";
  const decodeState = providerStateDecoder(logger, options.acceptProvider);
  const stateCopies = new ProviderStateCopies(
    {
      scoped: ticketsScope === "candidates" && keys.providerOffers,
      make: (filter) =>
        new BucketMirror({
          ...mirrorBase,
          bucket: stateBucket!,
          filter,
          onEntry: counting(stateBucket!.name),
          decode: decodeState,
        }),
      makeCatalog: (filter) =>
        new BucketMirror({
          ...mirrorBase,
          bucket: stateBucket!,
          filter,
          onEntry: counting(stateBucket!.name),
          decode: offerDecoder,
        }),
    },
    stateBucket!,
  );
  const decodeTickets = ticketsDecoder(keys, logger);
  const makeTicketsMirror = (filter: string): TicketsMirror => {
    const m: TicketsMirror = new BucketMirror({
      ...mirrorBase,
      bucket: ticketsBucket!,
      filter,
      onEntry: counting(ticketsBucket!.name),
      decode: decodeTickets,
      group: (key) => ticketsGroup(keys, key),
      earlyForget: {
        keepMs: options.ticketTombstoneKeepMs ?? TICKET_TOMBSTONE_KEEP_MS,
        needed: (key) => tombstoneNeeded(keys, m, key),
      },
    });
    return m;
  };
  const copies = new TicketsCopies(
    {
      keys,
      scope: ticketsScope,
      make: makeTicketsMirror,
      catalog: {
        get revision() {
          return stateCopies.catalog?.revision ?? 0;
        },
        offers: () => stateCopies.offers(),
      },
      onFollow: (p) => stateCopies.follow(p),
      onDrop: (p) => stateCopies.drop(p),
    },
    ticketsBucket!,
  );
  const providers = new ProviderStateReader(stateCopies, {
    now,
    staleMs: options.providerStaleMs ?? PROVIDER_STALE_MS,
    interest: (models) => copies.interest(models),
    need: (p) => void copies.of(p),
  });
  const decodeDemand = demandDecoder(logger, settings[MODEL_DEMAND_BUCKET]!.ttlMs);
  const demandCopies = new DemandCopies(
    {
      keys,
      scope: options.demandScope ?? options.ticketsScope ?? "all",
      make: (filter) =>
        new BucketMirror({
          ...mirrorBase,
          bucket: demandBucket!,
          filter,
          onEntry: counting(demandBucket!.name),
          decode: decodeDemand,
        }),
      residents: () => ({
        revision: `${providers.revision}/${copies.followed.length}`,
        models: residentModels(providers, copies.followed),
      }),
    },
    demandBucket!,
  );
  try {
    const first = options.firstSnapshotTimeoutMs;
    await Promise.all([stateCopies.start(first), copies.start(first), demandCopies.start(first)]);
  } catch (err) {
    stateCopies.close();
    copies.close();
    demandCopies.close();
    throw err;
  }

  const stats: StateStats = {
    casConflicts: 0,
    watchEntries,
    followedProviders: () => copies.followed.length,
    followedModels: () => demandCopies.followed.length,
  };
  const tickets = new TicketBook({
    tickets: copies.tracked(ticketsBucket!),
    keys,
    copies,
    providers,
    holderId,
    now,
    leaseMs: options.ticketLeaseMs ?? TICKET_LEASE_S * 1000,
    leaseGraceMs: options.leaseGraceMs ?? LEASE_GRACE_MS,
    maxAttempts: options.claimMaxAttempts ?? CLAIM_MAX_ATTEMPTS,
    freshnessMs: options.freshnessMs ?? FRESH_READ_MS,
    ...(options.claimBatch !== undefined ? { maxBatch: options.claimBatch } : {}),
    logger,
    onConflict: () => {
      stats.casConflicts++;
    },
  });
  const demand = new DemandBoard({
    bucket: demandCopies.tracked(demandBucket!),
    keys,
    copies: demandCopies,
    now,
  });
  const capacity = new CapacityWatch({
    sources: [stateCopies, ...(stateCopies.catalog !== undefined ? [stateCopies.catalog] : []), copies],
    now,
    // Claim guards precede a ticket write; conversation records free and take nothing.
    ignoreKey: (key) => {
      const kind = keys.parse(key).kind;
      return kind === "guard" || kind === "conversation";
    },
  });

  let closed = false;
  return {
    kind: kv.kind,
    kv,
    providers,
    providerWriter: new ProviderStateWriter(stateCopies.tracked(stateBucket!), keys.providerOffers),
    tickets,
    demand,
    capacity,
    get available() {
      return stateCopies.available && copies.available && demandCopies.available;
    },
    stats,
    close: async () => {
      if (closed) return;
      closed = true;
      await demand.flush().catch(() => undefined); // lingering use writes (best effort)
      capacity.close();
      stateCopies.close();
      copies.close();
      demandCopies.close();
      if (owned) await kv.close();
    },
  };
}

/** The models resident on `followed` providers (lazily: read only when the scope is recomputed). */
function* residentModels(providers: ProviderStateReader, followed: readonly string[]): Iterable<string> {
  for (const p of followed) {
    const s = providers.peek(p);
    if (s === undefined) continue;
    yield* s.loadedModels ?? [];
    yield* Object.keys(s.loadedModelFootprintsMiB ?? {});
  }
}

/** Opens (or creates) a bucket, retrying while JetStream is not ready yet. */
async function openBucket(
  kv: KvStore,
  name: string,
  settings: BucketSettings,
  timeoutMs: number,
): Promise<KvBucket> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await kv.bucket(name, settings);
    } catch (err) {
      const retry = KubemootError.is(err, ErrorCode.StateUnavailable) && kv.connection.connected;
      if (!retry || Date.now() + 250 > deadline) throw err;
      await new Promise((r) => setTimeout(r, Math.min(1000, 100 * 2 ** attempt)));
    }
  }
}
