// The claim protocol: an atomic, per-provider decision over NATS KV (no transactions).
//
//   Keys (bucket kubemoot_provider_tickets): tickets `<provider>__<uuid>` (Kubemoot's layout),
//   and one guard per provider, `_claim__<provider>`, whose value lists the tickets of the
//   last decision on that provider: {"v":1,"pending":[ticket, ...]}. Claims queued in one
//   process for one provider are decided together (a batch, one CAS); one CAS per provider is
//   in flight per process.
//
//   0. WARM. A claim without victims whose model the fresh copy (≤ 200 ms) shows resident on
//      the provider (published, or a residency overlay) takes no room: it is not decided on
//      the guard. Its ticket (coldLoad false) is written at once with update-at-revision 0 —
//      one round trip — and the claim is granted. Every other claim (cold, converging on a
//      load in flight, with victims, unknown provider) takes steps 1–5.
//   1. READ. Make the local copies of provider state and tickets current (≤ 200 ms; mirror.ts)
//      — for a claim with victims, proven current after the claim was made (one head-revision
//      barrier), so that it sees every ticket acknowledged before it, warm ones included —
//      then take the guard (revision g, pending P) and the provider's live tickets T from the
//      copy. A pending ticket the copy has never seen (not even as a tombstone) may not be
//      written yet: give it a moment (its holder writes it right after the guard), then count
//      it anyway (T ∪ P) and remember to help write it.
//   2. DECIDE. core's claimFits (+ the victim rule) over T ∪ P, one claim of the batch after
//      another, each granted one joining the view of the next. Refusals end here.
//   3. HELP. Write every unseen pending ticket with update-at-revision 0 ("never written"):
//      it fails harmlessly if its holder wrote it, and never resurrects one it released
//      (release leaves a tombstone, which revision 0 does not overwrite).
//   4. COMMIT. Compare-and-set the guard from g to {pending: our batch}. Conflict = another
//      decision came first: wait for the copy to show it, retry after a jitter that shrinks
//      with the claim's losses (old losers go first); bounded attempts.
//   5. WRITE. The winner writes its tickets (update-at-revision 0; a helper may have done it).
//
// Why this holds the four invariants (DESIGN.md §5):
//   - No overcommit at every revision: a guard-decided ticket key appears only after the guard
//     CAS that decided it and before the next guard CAS on that provider (step 3 of the next
//     decision ensures it). So the guard-decided tickets present at any revision are a subset
//     of the decisions made so far, and each decision saw every earlier one (from the copy,
//     which is at least at the guard's revision, plus the pending list). Without victim credit
//     the budget is monotone in the ticket set, so a subset fits too. With credit, tickets of
//     one decision are written in decision order, so a ticket relying on another's credit
//     never appears before it. A victim's credit counts once, and only while it is resident
//     (core's rule). The CAS must be linearizable: nats-kv.ts adds a message id so that it
//     is, even on clustered servers before 2.9.21 (nats-server#4320).
//     Warm tickets (step 0) change no budget: their model is resident, so none is an in-flight
//     load (for core, and for any checker that counts every ticket of a non-resident model),
//     and they plan no victims, so they add no credit. The budget at any revision is that of
//     the guard-decided tickets present, which fits. They enter other decisions only through
//     the victim rule, which can only refuse. And each warm grant is one the guard would have
//     made at the moment its write landed (claimFits grants a resident model unconditionally,
//     on a copy as fresh): a claim with victims either reads after that write — it sees the
//     ticket and is refused (step 1 makes this hold for every warm ticket acknowledged before
//     it was made) — or decided before it, an order the guard allows too (a warm claim is
//     never refused for a model that a plan will evict). If the model stops being resident
//     later, a warm ticket is where a guard-decided warm ticket always was: provider state is
//     not serialized by the guard, and both carry coldLoad false.
//   - Progress: a CAS fails only because another decision succeeded; every successful CAS
//     grants at least one claim. Someone always wins while room exists (lock-free). Warm
//     claims never conflict (a fresh key at revision 0) and no longer contend on the guard.
//   - Crash safety: a holder that dies anywhere leaves at most a guard entry and/or a ticket
//     with a lease (expiresAt); both stop counting when the lease passes (+ a small grace so
//     a Renew in flight lands first), and the bucket TTL removes them unconditionally.
//   - Fresh reads: decisions use copies proven current within three quarters of the 200 ms
//     bound (mirror.ts renews the proof in the background past half of it), so a process
//     stalled between its check and its write still decides on state younger than 200 ms; the
//     guard CAS additionally proves no other decision on this provider happened since the read.
//   A claim whose CAS outcome is unknown (NATS went away mid-request) fails with
//   StateUnavailable and tombstones its ticket key: if the CAS landed after all, its pending
//   ticket is then seen as released and neither counted nor written by anyone. A warm write
//   with an unknown outcome is tombstoned the same way (it takes no room either way).
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Ticket } from "../core/shapes.js";
import { type BudgetView, budgetView, residentModels } from "../core/vram.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { decideClaim } from "./claim-decision.js";
import type { KvBucket } from "./kv.js";
import { decodeJson, encodeJson } from "./kv.js";
import { stateUnavailable } from "./kv-errors.js";
import type { Logger } from "./logger.js";
import type { ProviderStateReader } from "./provider-state.js";
import { guardJson, parseGuard, ticketJson } from "./ticket-codec.js";
import { assertProviderName, guardKey, ticketKey } from "./ticket-keys.js";
import { providerResidencies, providerTickets, type TicketsMirror } from "./tickets-view.js";

export interface ClaimRequest {
  provider: string;
  model: string;
  /** VRAM the model takes (MiB). A warm claim records it and takes no new room. */
  modelFootprintMiB: number;
  /** KV-cache part of the footprint (MiB), recorded for Kubemoot's readers. */
  kvCacheFootprintMiB?: number;
  /** Victims this claim plans to unload, model → MiB. */
  evicts?: Record<string, number>;
  /** Lease of the ticket (ms); default the store's lease. */
  leaseMs?: number;
}

export type ClaimRefusalReason =
  /** The budget has no room for the model (even with the planned victims' credit). */
  | "no-room"
  /** A planned victim has a live ticket: it picked up work. */
  | "victim-busy"
  /** No current (non-stale) state for the provider. */
  | "provider-unknown"
  /** Every attempt lost its compare-and-set (bounded attempts ran out). */
  | "contention";

export interface ClaimStats {
  /** Decisions made for this claim (one per attempt). */
  attempts: number;
  /** Attempts lost to another decision's compare-and-set. */
  conflicts: number;
  /** Tickets-bucket revision the deciding read was at. */
  revision: number;
  /** Age of the state the decision read (ms since the copies were last proven current). */
  viewAgeMs: number;
  /** Monotonic time (performance.now) at which that state was proven current. */
  confirmedAt: number;
}

export type ClaimResult =
  | { ok: true; ticket: Ticket; key: string; coldLoad: boolean; stats: ClaimStats }
  | {
      ok: false;
      reason: ClaimRefusalReason;
      stats: ClaimStats;
      /** The provider's budget as the refusing decision saw it (absent for provider-unknown). */
      budget?: BudgetView;
      /** The tickets that decision counted (written and pending), for diagnosis. */
      counted?: Ticket[];
      victim?: string;
    };

export interface ClaimEngineOptions {
  tickets: KvBucket;
  mirror: TicketsMirror;
  providers: ProviderStateReader;
  holderId: string;
  now: () => number;
  leaseMs: number;
  leaseGraceMs: number;
  maxAttempts: number;
  /** Maximum age of the state a decision reads (ms). */
  freshnessMs: number;
  /** Claims decided together in one compare-and-set (same provider, same process); default 16. */
  maxBatch?: number;
  /** Upper bound of the first retry jitter (ms); default 4. */
  jitterMs?: number;
  /** How long to wait for the last decision's tickets to arrive before writing them ourselves (ms); default 20. */
  helpWaitMs?: number;
  /** After a lost CAS, how long to wait for the winning guard to reach the copy before reading it directly (ms); default 100. */
  refreshWaitMs?: number;
  logger: Logger;
  /** Counts every lost compare-and-set (metrics). */
  onConflict?: () => void;
  /**
   * This process's ticket releases still in flight, if any: a claim decided on the guard waits
   * for them, so that room (or a victim) its own process just gave back is seen.
   */
  settleReleases?: () => Promise<void> | undefined;
}

interface Pending {
  ticket: Ticket;
  leaseMs: number;
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

interface Guard {
  revision: number;
  pending: Ticket[];
}

const GUARD_MAX_BYTES = 3800; // under the bucket's 4096-byte value limit

export class ClaimEngine {
  private readonly queues = new Map<string, Pending[]>();
  private readonly running = new Set<string>();
  private readonly maxBatch: number;
  private readonly jitterMs: number;
  private readonly helpWaitMs: number;
  private readonly refreshWaitMs: number;
  /**
   * Age of the copies a decision may read (ms): three quarters of the bound, so that a process
   * descheduled (or collecting garbage) between its check and its write still decides on state
   * younger than the bound.
   */
  private readonly decideAgeMs: number;
  /** Ids of tickets known to be written (recent ones, bounded). */
  private readonly written = new Set<string>();

  constructor(private readonly o: ClaimEngineOptions) {
    this.maxBatch = Math.max(1, o.maxBatch ?? 16);
    this.jitterMs = o.jitterMs ?? 4;
    this.helpWaitMs = o.helpWaitMs ?? 20;
    this.refreshWaitMs = o.refreshWaitMs ?? 100;
    this.decideAgeMs = (o.freshnessMs * 3) / 4;
  }

  /** Claims a ticket; resolves granted or refused, rejects with StateUnavailable when NATS is away. */
  async claim(req: ClaimRequest): Promise<ClaimResult> {
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
      const warm = await this.claimWarm(ticket, leaseMs);
      if (warm !== undefined) return warm;
    }
    const releases = this.o.settleReleases?.();
    if (releases !== undefined) await releases;
    const since = performance.now();
    return new Promise((resolve, reject) => {
      const p: Pending = {
        ticket,
        leaseMs,
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

  /**
   * The warm path: a claim without victims whose model the provider has resident (published
   * or overlay) takes no room, so it needs no decision on the guard: its ticket is written
   * directly (revision 0: never written), one round trip. Undefined when the claim is not warm
   * by a fresh read (cold, converging on a load in flight, unknown provider): it then goes
   * through the guard.
   */
  private async claimWarm(ticket: Ticket, leaseMs: number): Promise<ClaimResult | undefined> {
    const { mirror, providers } = this.o;
    for (let round = 0; ; round++) {
      await Promise.all([mirror.fresh(-Infinity, this.decideAgeMs), providers.fresh(this.decideAgeMs)]);
      if (performance.now() - Math.min(mirror.confirmedAt, providers.confirmedAt) <= this.decideAgeMs) break;
      if (round >= 20) throw stateUnavailable("could not read provider state and tickets fresh together");
    }
    // The decision below is synchronous: the age measured here is the age it decides on.
    const confirmedAt = Math.min(mirror.confirmedAt, providers.confirmedAt);
    const stats: ClaimStats = {
      attempts: 1,
      conflicts: 0,
      revision: mirror.revision,
      viewAgeMs: performance.now() - confirmedAt,
      confirmedAt,
    };
    const state = providers.peek(ticket.provider);
    if (state === undefined) return undefined;
    if (!residentModels(state, providerResidencies(mirror, ticket.provider)).has(ticket.modelName)) {
      return undefined;
    }
    const now = this.o.now();
    ticket.claimedAt = new Date(now).toISOString();
    ticket.expiresAt = now + leaseMs;
    ticket.coldLoad = false;
    const key = ticketKey(ticket.provider, ticket.ticketId);
    try {
      await this.o.tickets.update(key, encodeJson(ticketJson(ticket)), 0);
    } catch (err) {
      // Unknown outcome: a tombstone keeps a late write from ever landing (it takes no room
      // either way, and its lease ends it).
      this.tombstone(ticket);
      throw err;
    }
    return { ok: true, ticket, key, coldLoad: false, stats };
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
          if (p.uncertain) this.tombstone(p.ticket);
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
   * One read–decide–help–commit round for a batch. Returns the claims to retry (after a lost
   * CAS) with the guard just read back, or an empty list when all were settled.
   */
  private async attempt(
    provider: string,
    batch: Pending[],
    authoritative: Guard | null,
  ): Promise<{ retry: Pending[]; guard: Guard | null }> {
    const { mirror, providers, tickets: bucket } = this.o;
    for (const p of batch) p.attempts++;
    // A claim with victims must see every ticket written before it was made (a warm ticket
    // written without the guard may have made its victim busy): its read starts after it.
    let since = Number.NEGATIVE_INFINITY;
    for (const p of batch) if (Object.keys(p.ticket.evicts).length > 0) since = Math.max(since, p.since);
    // Read: both copies current, and the last decision's tickets given a moment to arrive
    // (they are written right after its guard) before we would write them ourselves.
    let waited = false;
    for (let round = 0; ; round++) {
      await Promise.all([mirror.fresh(since, this.decideAgeMs), providers.fresh(this.decideAgeMs)]);
      if (!waited) {
        waited = true;
        const g = this.pickGuard(provider, authoritative);
        const others = this.unseenPending(provider, g, this.o.now() - this.o.leaseGraceMs).filter(
          (t) => !this.written.has(t.ticketId),
        );
        if (others.length > 0) {
          const keys = others.map((t) => ticketKey(provider, t.ticketId));
          await mirror.waitFor(() => keys.every((k) => mirror.seen(k) !== undefined), this.helpWaitMs);
          continue;
        }
      }
      // The decision below is synchronous: the age measured here is the age it decides on.
      if (performance.now() - Math.min(mirror.confirmedAt, providers.confirmedAt) <= this.decideAgeMs) break;
      if (round >= 20) throw stateUnavailable("could not read provider state and tickets fresh together");
    }
    const now = this.o.now();
    const liveNow = now - this.o.leaseGraceMs;
    // What this decision read: the copies' revision and when they were last proven current.
    const confirmedAt = Math.min(mirror.confirmedAt, providers.confirmedAt);
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
    const guard = this.pickGuard(provider, authoritative);
    const residencies = providerResidencies(mirror, provider);
    // Pending tickets of the last decision that the copy has never seen are not written yet.
    const missing = this.unseenPending(provider, guard, liveNow);
    const view = [...providerTickets(mirror, provider, liveNow), ...missing];
    const toHelp = missing.filter((t) => !this.written.has(t.ticketId));

    if (state === undefined) {
      for (const p of batch) p.resolve({ ok: false, reason: "provider-unknown", stats: stats(p) });
      return { retry: [], guard: null };
    }

    // Decide the batch in order, each granted claim joining the view of the next.
    const decided: Pending[] = [];
    for (const p of batch) {
      p.ticket.claimedAt = new Date(now).toISOString();
      p.ticket.expiresAt = now + p.leaseMs;
      const d = decideClaim({ state, tickets: view, residencies }, p.ticket, liveNow);
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
    let value = encodeJson(guardJson({ pending: open.map((p) => p.ticket) }));
    const deferred: Pending[] = [];
    while (value.byteLength > GUARD_MAX_BYTES && open.length > 1) {
      deferred.unshift(open.pop()!);
      value = encodeJson(guardJson({ pending: open.map((p) => p.ticket) }));
    }
    if (deferred.length > 0) this.queues.get(provider)?.unshift(...deferred);
    if (open.length === 0) return { retry: [], guard: null };

    await this.writeInOrder(toHelp);

    let committed: number;
    try {
      committed = await bucket.update(guardKey(provider), value, guard.revision);
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
      const gk = guardKey(provider);
      if (await mirror.waitFor(() => (mirror.seen(gk)?.revision ?? 0) > guard.revision, this.refreshWaitMs)) {
        return { retry, guard: null };
      }
      const current = await this.readGuard(provider);
      const okw = await mirror.waitForRevision(current.revision);
      if (!okw) {
        return { retry, guard: null }; // the next fresh() rebuilds or reports the copy
      }
      return { retry, guard: current };
    }
    await this.finish(open, stats);
    // Our own guard is the newest decision on the provider; the next round starts from it
    // without waiting for the copy to deliver it back (saves a lost CAS against ourselves).
    return { retry: [], guard: { revision: committed, pending: open.map((p) => p.ticket) } };
  }

  /** Writes the winners' tickets and resolves them as granted. */
  private async finish(won: Pending[], stats: (p: Pending) => ClaimStats): Promise<void> {
    await this.writeInOrder(
      won.map((p) => p.ticket),
      (t) =>
        this.writeTicket(t).catch((err: unknown) => {
          // The decision is committed in the guard: the next claim on the provider writes the
          // ticket, or its lease ends it. The holder owns the room either way.
          this.o.logger.warn({ err, ticketId: t.ticketId }, "state: could not write a won ticket");
        }),
    );
    for (const p of won) {
      p.resolve({
        ok: true,
        ticket: p.ticket,
        key: ticketKey(p.ticket.provider, p.ticket.ticketId),
        coldLoad: p.ticket.coldLoad === true,
        stats: stats(p),
      });
    }
  }

  /**
   * Writes the tickets of one decision. When one of them plans evictions, a later one may rely
   * on its credit, so they go in decision order (every written subset is then a prefix, which
   * fits); otherwise any subset fits and they go together.
   */
  private async writeInOrder(tickets: Ticket[], write = (t: Ticket) => this.writeTicket(t)): Promise<void> {
    if (tickets.some((t) => Object.keys(t.evicts).length > 0)) {
      for (const t of tickets) await write(t);
    } else {
      await Promise.all(tickets.map(write));
    }
  }

  /** Writes a decided ticket unless it was ever written (or released) before. */
  private async writeTicket(t: Ticket): Promise<void> {
    try {
      await this.o.tickets.update(ticketKey(t.provider, t.ticketId), encodeJson(ticketJson(t)), 0);
    } catch (err) {
      if (!KubemootError.is(err, ErrorCode.StateConflict)) throw err;
    }
    // Known written (by us or by someone before us): never worth helping again.
    this.written.add(t.ticketId);
    if (this.written.size > 4096) this.written.delete(this.written.values().next().value as string);
  }

  /** Best effort: a tombstone keeps an abandoned pending ticket from ever being written. */
  private tombstone(t: Ticket): void {
    this.o.tickets.delete(ticketKey(t.provider, t.ticketId)).catch(() => undefined);
  }

  /**
   * The guard to decide against: the one read back after a lost CAS (or our own last commit)
   * unless the copy already holds a newer one. A read-back revision 0 means the server
   * dropped the guard by TTL: trust it.
   */
  private pickGuard(provider: string, authoritative: Guard | null): Guard {
    const fromMirror = this.guardFromMirror(provider);
    return authoritative !== null &&
      (authoritative.revision === 0 || authoritative.revision > fromMirror.revision)
      ? authoritative
      : fromMirror;
  }

  /** Pending tickets of a guard that the copy has never seen (not even as a tombstone), still live. */
  private unseenPending(provider: string, guard: Guard, liveNowMs: number): Ticket[] {
    return guard.pending.filter(
      (t) =>
        this.o.mirror.seen(ticketKey(provider, t.ticketId)) === undefined &&
        (t.expiresAt === undefined || t.expiresAt > liveNowMs),
    );
  }

  private guardFromMirror(provider: string): Guard {
    const key = guardKey(provider);
    const seen = this.o.mirror.seen(key);
    const v = this.o.mirror.get(key)?.value;
    return {
      revision: seen === undefined ? 0 : seen.revision,
      pending: v?.kind === "guard" ? v.guard.pending : [],
    };
  }

  private async readGuard(provider: string): Promise<Guard> {
    const e = await this.o.tickets.get(guardKey(provider));
    if (e === null) return { revision: 0, pending: [] };
    let raw: unknown;
    try {
      raw = decodeJson(e.value);
    } catch {
      raw = undefined;
    }
    return { revision: e.revision, pending: parseGuard(raw, provider).pending };
  }

  /** Jitter before a retry; claims that lost more often wait less, so old claims go first. */
  private backoff(batch: Pending[]): Promise<void> {
    let losses = 0;
    for (const p of batch) losses = Math.max(losses, p.conflicts);
    const ms = (Math.random() * this.jitterMs) / 2 ** Math.min(Math.max(0, losses - 1), 5);
    return ms < 0.05 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms));
  }
}
