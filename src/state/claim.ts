// The claim protocol (docs/rules/state.md §5–§9): an atomic decision per provider over KV
// compare-and-set, without transactions. Each provider has a guard key (`g.<provider>.claim`,
// or Kubemoot's layout's `_claim__<provider>`) listing the tickets of the last decision on it.
// A claim reads fresh copies of provider state and tickets, counts the guard's tickets not
// written yet, decides with core's budget, then compare-and-sets the guard to its own decision
// (carrying those unwritten tickets along) and only then writes its own ticket. A lost CAS means another decision came first:
// retry after a jitter that favours claims that lost more often. Claims queued in one process
// for one provider are decided together (one CAS per batch, one batch in flight). A warm claim
// (no victims, model resident) takes no room and skips the guard. docs/rules/state.md §7
// argues why no interleaving overcommits.
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { budgetView, claimVerdict, type Ticket } from "../core/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { decisionStillFits } from "./claim-confirm.js";
import { FreshCopies, notFreshTogether } from "./claim-fresh.js";
import { type Guard, guardValue, pickGuard, readGuard, unseenPending } from "./claim-guard.js";
import type { ClaimEngineOptions, ClaimRequest, ClaimResult, ClaimStats } from "./claim-types.js";
import { type WarmContext, writeWarmTicket } from "./claim-warm.js";
import { TicketWrites } from "./claim-write.js";
import { OwnTickets } from "./own-tickets.js";
import { assertProviderName } from "./ticket-keys.js";
import { providerResidencies, providerTickets } from "./tickets-view.js";

interface Pending {
  ticket: Ticket;
  leaseMs: number;
  /** The copy's slots, for a claim that needs a free one (see ClaimRequest.slots). */
  slots: number | undefined;
  /** When the claim was made (performance.now); a claim with victims reads the tickets as of then or later. */
  since: number;
  attempts: number;
  conflicts: number;
  /** A compare-and-set carrying this ticket had an unknown outcome. */
  uncertain: boolean;
  /** Resolved or rejected already. */
  settled: boolean;
  resolve: (r: ClaimResult) => void;
  reject: (err: unknown) => void;
}

export class ClaimEngine {
  private readonly queues = new Map<string, Pending[]>();
  private readonly running = new Set<string>();
  private readonly maxBatch: number;
  private readonly jitterMs: number;
  private readonly helpWaitMs: number;
  private readonly refreshWaitMs: number;
  /**
   * The copies a decision reads, proven current within three quarters of the freshness bound,
   * so that a process descheduled (or collecting garbage) between its check and its write still
   * decides on state younger than the bound.
   */
  private readonly fresh: FreshCopies;
  /** Writes won tickets and remembers which are known written. */
  private readonly writes: TicketWrites;
  /** This process's own grants and releases the watched copy has not shown yet. */
  readonly mine: OwnTickets;
  private readonly warmContext: WarmContext;

  constructor(private readonly o: ClaimEngineOptions) {
    this.maxBatch = Math.max(1, o.maxBatch ?? 16);
    this.jitterMs = o.jitterMs ?? 4;
    this.helpWaitMs = o.helpWaitMs ?? 20;
    this.refreshWaitMs = o.refreshWaitMs ?? 100;
    this.fresh = new FreshCopies(o, (o.freshnessMs * 3) / 4);
    this.mine = new OwnTickets(o.copies, o.keys);
    this.writes = new TicketWrites(o);
    this.warmContext = { o, mine: this.mine, refreshWaitMs: this.refreshWaitMs, fresh: this.fresh };
  }

  /**
   * Submits a claim: a warm one is written at once (claim-warm.ts), any other is queued for its
   * provider's next guarded decision. Resolves granted or refused; rejects with StateUnavailable
   * when NATS is away.
   */
  async submit(req: ClaimRequest): Promise<ClaimResult> {
    assertProviderName(req.provider);
    if (typeof req.model !== "string" || req.model === "") {
      throw new KubemootError(ErrorCode.InvalidArgument, "model: required", { field: "model" });
    }
    const footprint = req.modelFootprintMiB;
    if (!(typeof footprint === "number" && Number.isFinite(footprint) && footprint >= 0)) {
      throw new KubemootError(ErrorCode.InvalidArgument, "modelFootprintMiB: must be a number ≥ 0", {
        field: "modelFootprintMiB",
      });
    }
    const leaseMs = req.leaseMs ?? this.o.leaseMs;
    const ticket: Ticket = {
      ticketId: randomUUID(),
      provider: req.provider,
      modelFootprintMiB: footprint,
      kvCacheFootprintMiB: req.kvCacheFootprintMiB ?? 0,
      holderId: this.o.holderId,
      claimedAt: "",
      modelName: req.model,
      evicts: { ...(req.evicts ?? {}) },
      expiresAt: 0,
    };
    if (Object.keys(ticket.evicts).length === 0) {
      const warm = await writeWarmTicket(this.warmContext, ticket, leaseMs, req.slots);
      if (warm !== undefined) return warm;
    }
    const releases = this.o.settleReleases?.();
    if (releases !== undefined) await releases;
    const since = performance.now();
    return new Promise((resolve, reject) => {
      const p: Pending = {
        ticket,
        leaseMs,
        slots: req.slots,
        since,
        attempts: 0,
        conflicts: 0,
        uncertain: false,
        settled: false,
        resolve: (r) => {
          p.settled = true;
          resolve(r);
        },
        reject: (err) => {
          p.settled = true;
          reject(err);
        },
      };
      let q = this.queues.get(req.provider);
      if (q === undefined) {
        q = [];
        this.queues.set(req.provider, q);
      }
      q.push(p);
      if (!this.running.has(req.provider)) {
        this.running.add(req.provider);
        void this.drain(req.provider);
      }
    });
  }

  /** Serves the provider's queue until it is empty: one decision (CAS) in flight at a time. */
  private async drain(provider: string): Promise<void> {
    const queue = this.queues.get(provider)!;
    let batch: Pending[] = [];
    let authoritative: Guard | null = null;
    while (batch.length > 0 || queue.length > 0) {
      while (batch.length < this.maxBatch && queue.length > 0) batch.push(queue.shift()!);
      try {
        const outcome = await this.attempt(provider, batch, authoritative);
        authoritative = outcome.guard;
        batch = outcome.retry;
        if (batch.length > 0) await this.backoff(batch);
      } catch (err) {
        for (const p of batch) {
          if (p.settled) continue;
          p.reject(err);
          if (p.uncertain) this.writes.abandon(p.ticket);
        }
        batch = [];
        authoritative = null;
      }
    }
    // Synchronously with the last emptiness check, so a claim queued later starts a new drain.
    this.queues.delete(provider);
    this.running.delete(provider);
  }

  /**
   * One read–decide–commit round for a batch. Returns the claims to retry (after a lost
   * CAS) with the guard just read back, or an empty list when all were settled.
   */
  private async attempt(
    provider: string,
    batch: Pending[],
    authoritative: Guard | null,
  ): Promise<{ retry: Pending[]; guard: Guard | null }> {
    const { providers, tickets: bucket } = this.o;
    const mirror = this.o.copies.of(provider);
    for (const p of batch) p.attempts++;
    // A claim with victims must see every ticket written before it was made (a warm ticket
    // written without the guard may have made its victim busy): its read starts after it.
    let since = Number.NEGATIVE_INFINITY;
    for (const p of batch) if (Object.keys(p.ticket.evicts).length > 0) since = Math.max(since, p.since);
    // Read: both copies current, and the last decision's tickets given a moment to arrive
    // (they are written right after its guard) before we would carry them in our guard.
    let waited = false;
    for (let round = 0; ; round++) {
      await this.fresh.refresh(provider, since);
      if (!waited) {
        waited = true;
        const g = pickGuard(this.o.keys, mirror, provider, authoritative);
        const others = unseenPending(
          this.o.keys,
          mirror,
          provider,
          g,
          this.o.now() - this.o.leaseGraceMs,
        ).filter((t) => !this.writes.has(t.ticketId));
        if (others.length > 0) {
          const keys = others.map((t) => this.o.keys.ticket(t));
          await mirror.waitFor(() => keys.every((k) => mirror.knows(k)), this.helpWaitMs);
          continue;
        }
      }
      // Never decide on an older provider state than the bucket holds now (a claim decided
      // elsewhere, warm ones included, may already rely on it) or than the last decision read.
      const newer = Math.max(
        pickGuard(this.o.keys, mirror, provider, authoritative).stateRevision,
        round === 0 ? await providers.headRevisionOf(provider) : 0,
      );
      if (newer > providers.revisionOf(provider)) {
        await providers.waitForRevision(provider, newer, this.refreshWaitMs);
        if (round >= 20) throw notFreshTogether();
        continue;
      }
      // The decision below is synchronous: the age measured here is the age it decides on.
      if (this.fresh.freshEnough(provider)) break;
      if (round >= 20) throw notFreshTogether();
    }
    const now = this.o.now();
    const liveNow = now - this.o.leaseGraceMs;
    // What this decision read: the copies' revision and when they were last proven current.
    const confirmedAt = Math.min(mirror.confirmedAt, providers.confirmedAt(provider));
    const viewAgeMs = performance.now() - confirmedAt;
    const revision = mirror.revision;
    const stats = (p: Pending): ClaimStats => ({
      attempts: p.attempts,
      conflicts: p.conflicts,
      revision,
      viewAgeMs,
      confirmedAt,
    });

    const state = providers.peek(provider);
    const guard = pickGuard(this.o.keys, mirror, provider, authoritative);
    const residencies = providerResidencies(mirror, provider);
    // Pending tickets of the last decision that the copy has never seen are not written yet:
    // counted, and carried into this decision's guard until the copy sees them (their holder
    // writes them, or a tombstone ends them) or their lease passes. Nobody writes another's
    // ticket: a holder may write only its own namespace's keys (docs/rules/state.md §6, step 3).
    const carried = unseenPending(this.o.keys, mirror, provider, guard, liveNow);
    const view = [...providerTickets(mirror, provider, liveNow), ...carried];

    if (state === undefined) {
      for (const p of batch) p.resolve({ ok: false, reason: "provider-unknown", stats: stats(p) });
      return { retry: [], guard: null };
    }

    // Decide the batch in order, each granted claim joining the view of the next.
    const counted = new Set(view.map((t) => t.ticketId));
    const base = [...view];
    const decided: Pending[] = [];
    for (const p of batch) {
      p.ticket.claimedAt = new Date(now).toISOString();
      p.ticket.expiresAt = now + p.leaseMs;
      if (p.slots !== undefined && p.slots > 0) {
        // A claim that joins a copy (loading, so not warm by the read) needs a free slot too.
        let held = 0;
        for (const t of view) if (t.modelName === p.ticket.modelName && this.mine.holdsSlot(t)) held++;
        for (const t of this.mine.unseen(provider)) {
          if (t.modelName === p.ticket.modelName && !view.includes(t)) held++;
        }
        if (held >= p.slots) {
          p.resolve({ ok: false, reason: "no-slot", stats: stats(p) });
          continue;
        }
      }
      const d = claimVerdict({ state, tickets: view, residencies }, p.ticket, liveNow);
      if (!d.ok) {
        p.resolve({
          ok: false,
          reason: d.reason,
          stats: stats(p),
          budget: budgetView(state, view, residencies, liveNow),
          counted: [...view],
          ...(d.victim !== undefined ? { victim: d.victim } : {}),
        });
        continue;
      }
      p.ticket.coldLoad = d.coldLoad;
      decided.push(p);
      view.push(p.ticket);
    }
    const open = decided;
    // Keep the guard value under the bucket's size limit; the rest waits for the next round.
    const stateRevisionRead = providers.revisionOf(provider);
    const { value, deferred } = guardValue(bucket, open, stateRevisionRead, carried);
    if (deferred.length > 0) this.queues.get(provider)?.unshift(...deferred);
    if (open.length === 0) return { retry: [], guard: null };

    let committed: number;
    try {
      committed = await bucket.update(this.o.keys.guard(provider), value, guard.revision);
    } catch (err) {
      if (!KubemootError.is(err, ErrorCode.StateConflict)) {
        // Unknown outcome (the CAS may still land): the claims fail with the error and their
        // ticket keys get tombstones, so no one ever writes those tickets.
        for (const p of open) p.uncertain = true;
        throw err;
      }
      this.o.onConflict?.();
      const retry: Pending[] = [];
      for (const p of open) {
        p.conflicts++;
        if (p.attempts >= this.o.maxAttempts) p.resolve({ ok: false, reason: "contention", stats: stats(p) });
        else retry.push(p);
      }
      // The guard that beat us is already on its way to the copy: wait for it there. Only if
      // it does not come (e.g. the server dropped the guard by TTL), read it back directly.
      const gk = this.o.keys.guard(provider);
      if (await mirror.waitFor(() => (mirror.seen(gk)?.revision ?? 0) > guard.revision, this.refreshWaitMs)) {
        return { retry, guard: null };
      }
      const current = await readGuard(this.o.keys, bucket, provider);
      const okw = await mirror.waitForRevision(current.revision);
      if (!okw) {
        return { retry, guard: null }; // the next fresh() rebuilds or reports the copy
      }
      return { retry, guard: current };
    }
    // Warm tickets written while we decided: judge the batch again with them counted.
    const withdrawn = await this.confirmDecision(provider, committed, counted, base, open, liveNow);
    const kept = withdrawn.length === 0 ? open : open.filter((p) => !withdrawn.includes(p));
    const retry = withdrawn.filter((p) => {
      if (p.attempts < this.o.maxAttempts) return true;
      p.resolve({ ok: false, reason: "contention", stats: stats(p) });
      return false;
    });
    await this.finish(kept, stats);
    // Our own guard is the newest decision on the provider; the next round starts from it
    // without waiting for the copy to deliver it back (saves a lost CAS against ourselves).
    return {
      retry,
      guard: {
        revision: committed,
        pending: [...carried, ...open.map((p) => p.ticket)],
        stateRevision: stateRevisionRead,
      },
    };
  }

  /**
   * After a committed decision (claim-confirm.ts): claims that no longer fit beside warm
   * tickets written while it decided are withdrawn — their keys get tombstones before anyone
   * could write them — and returned to be retried under new ids.
   */
  private async confirmDecision(
    provider: string,
    committed: number,
    counted: ReadonlySet<string>,
    base: readonly Ticket[],
    open: Pending[],
    liveNow: number,
  ): Promise<Pending[]> {
    const { providers } = this.o;
    const mirror = this.o.copies.of(provider);
    const reached = await mirror.waitForRevision(committed, this.refreshWaitMs);
    const fits = decisionStillFits(
      reached
        ? {
            mirror,
            state: providers.peek(provider),
            provider,
            committed,
            counted,
            base,
            liveNowMs: liveNow,
            slots: new Map(
              open.flatMap((p) => (p.slots !== undefined ? [[p.ticket.ticketId, p.slots]] : [])),
            ),
            holdsSlot: (t) => this.mine.holdsSlot(t),
          }
        : undefined,
      open.map((p) => p.ticket),
    );
    const withdrawn = open.filter((_, i) => !fits[i]);
    if (withdrawn.length === 0) return [];
    this.o.onWithdraw?.();
    await Promise.all(
      withdrawn.map(async (p) => {
        // Withdrawn before we wrote it: the tombstone keeps it from ever being written.
        this.writes.mark(p.ticket.ticketId);
        await this.o.tickets.delete(this.o.keys.ticket(p.ticket));
        p.ticket.ticketId = randomUUID();
        p.conflicts++;
      }),
    );
    return withdrawn;
  }

  /**
   * Writes the winners' tickets and resolves them as granted; one that could not be written is
   * answered with the error (claim-write.ts).
   */
  private async finish(won: Pending[], stats: (p: Pending) => ClaimStats): Promise<void> {
    const { failed, error } = await this.writes.writeDecided(won.map((p) => p.ticket));
    for (const p of won) {
      if (failed.has(p.ticket)) {
        this.o.logger.warn(
          { err: error, ticketId: p.ticket.ticketId },
          "state: could not write a won ticket",
        );
        p.reject(error);
        continue;
      }
      this.mine.grant(this.o.keys.ticket(p.ticket), p.ticket);
      p.resolve({
        ok: true,
        ticket: p.ticket,
        key: this.o.keys.ticket(p.ticket),
        coldLoad: p.ticket.coldLoad === true,
        stats: stats(p),
      });
    }
  }

  /** Jitter before a retry; claims that lost more often wait less, so old claims go first. */
  private backoff(batch: Pending[]): Promise<void> {
    let losses = 0;
    for (const p of batch) losses = Math.max(losses, p.conflicts);
    const ms = (Math.random() * this.jitterMs) / 2 ** Math.min(Math.max(0, losses - 1), 5);
    return ms < 0.05 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms));
  }
}
