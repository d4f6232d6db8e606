// Tickets: claim (claim.ts), release, renew, residency overlays and per-provider scans.
// Release deletes the ticket (the fast reclaim); the lease (expiresAt) and the bucket TTL are
// the unconditional reclaim, with no reaper.
import { performance } from "node:perf_hooks";
import {
  type BudgetView,
  budgetView,
  type ConversationIndex,
  type ConversationSeen,
  indexConversations,
  overlayCurrent,
  type ProviderState,
  type Residency,
  type Ticket,
} from "../core/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { ClaimEngine } from "./claim.js";
import type { ClaimEngineOptions, ClaimRequest, ClaimResult } from "./claim-types.js";
import { conversationJson } from "./conversation-codec.js";
import { decodeJson, encodeJson, type KvBucket } from "./kv.js";
import type { ProviderStateReader } from "./provider-state.js";
import { parseTicket, residencyJson, suspectJson, ticketJson } from "./ticket-codec.js";
import { assertProviderName } from "./ticket-keys.js";
import type { TicketsCopies } from "./tickets-copies.js";
import {
  CONVERSATION_GROUP,
  providerResidencies,
  providerTickets,
  type TicketsMirror,
} from "./tickets-view.js";

/** The longest a cached list of conversation records is served without a change (ms). */
const CONVERSATIONS_REREAD_MS = 5_000;

/** Names one ticket: its provider and id (a Ticket will do). */
export interface TicketRef {
  provider: string;
  ticketId: string;
  /** Its holder, when known: its key is in the holder's namespace (default: this process's). */
  holderId?: string;
}

/** One provider as a claim would see it now. */
export interface ProviderView {
  state: ProviderState | undefined;
  tickets: Ticket[];
  residencies: Residency[];
  /** Undefined when the provider has no current state. */
  budget: BudgetView | undefined;
}

export type TicketBookOptions = ClaimEngineOptions;

export class TicketBook {
  private readonly engine: ClaimEngine;
  private readonly bucket: KvBucket;
  private readonly copies: TicketsCopies;
  private conversationsCache: { count: number; at: number; index: ConversationIndex } | undefined;
  private readonly providers: ProviderStateReader;
  /** Deletes sent and not yet answered (a caller may not wait for its release). */
  private readonly releasing = new Set<Promise<void>>();

  constructor(private readonly o: TicketBookOptions) {
    // A decision that needs room first lets this process's releases in flight land, so that a
    // release its caller did not wait for is still seen by the next claim made here.
    this.engine = new ClaimEngine({ ...o, settleReleases: () => this.releasesSettled() });
    this.bucket = o.tickets;
    this.copies = o.copies;
    this.providers = o.providers;
  }

  /**
   * Claims a ticket on a provider: warm (model resident: no new room), cold (room for the
   * model), or with planned evictions (`evicts`: the victims' credit, counted once and only
   * while resident; refused when a victim has a live ticket). Atomic per provider (claim.ts).
   */
  claim(req: ClaimRequest): Promise<ClaimResult> {
    return this.engine.submit(req);
  }

  /**
   * Deletes the ticket (idempotent). Its room is free for the next claim. A caller may leave the
   * promise to settle on its own: claims that need room made here wait for it (see above).
   */
  release(ref: TicketRef): Promise<void> {
    let key: string;
    try {
      assertProviderName(ref.provider);
      key = this.o.keys.ticket(ref);
    } catch (err) {
      return Promise.reject(err);
    }
    this.engine.mine.forget(ref, key);
    const copy = this.copies.following(ref.provider);
    if (copy?.available && copy.shownDeleted(key)) return Promise.resolve();
    const done = this.bucket.delete(key).then(() => undefined);
    this.releasing.add(done);
    const forget = () => {
      this.releasing.delete(done);
    };
    done.then(forget, forget);
    return done;
  }

  /** Resolves once every release sent so far has been answered (landed or failed). */
  releasesSettled(): Promise<void> | undefined {
    if (this.releasing.size === 0) return undefined;
    return Promise.allSettled([...this.releasing]).then(() => undefined);
  }

  /**
   * Extends a ticket's lease to now + `leaseMs` (default the store's lease) and returns it.
   * NotFound when the ticket was released, its lease already passed, or it is not ours to see.
   */
  async renew(ref: TicketRef, leaseMs = this.o.leaseMs): Promise<Ticket> {
    assertProviderName(ref.provider);
    const key = this.o.keys.ticket(ref);
    for (let attempt = 0; attempt < 8; attempt++) {
      const e = await this.bucket.get(key);
      let t: Ticket | undefined;
      if (e !== null) {
        try {
          t = parseTicket(decodeJson(e.value), ref);
        } catch {
          t = undefined;
        }
      }
      const now = this.o.now();
      if (e === null || t === undefined) throw notFound(ref, "released or never written");
      // A passed lease is not renewed: another claim may already have spent the room.
      if (t.expiresAt !== undefined && t.expiresAt <= now) throw notFound(ref, "its lease has passed");
      const renewed: Ticket = { ...t, expiresAt: now + leaseMs };
      try {
        await this.bucket.update(key, encodeJson(ticketJson(renewed)), e.revision);
        return renewed;
      } catch (err) {
        if (!KubemootError.is(err, ErrorCode.StateConflict)) throw err;
      }
    }
    throw new KubemootError(ErrorCode.StateConflict, `ticket ${ref.ticketId}: renew kept conflicting`);
  }

  /** Records that a model is loaded on a provider (after a call ran on it). */
  async writeResidency(r: Residency): Promise<void> {
    assertProviderName(r.provider);
    // The same residency seen again (another call that converged on the same load, possibly
    // from another sidecar, or the engine's measured footprint refining the estimate): the
    // overlay keeps when the model became resident and how long that load took, which
    // placement's minimum residency counts from (docs/rules/state.md §2.2). Only an overlay a
    // newer probe has outlived (the model was unloaded since) starts afresh.
    const key = this.o.keys.residency(r.provider, r.modelName);
    const prev = this.copies.of(r.provider).get(key)?.value;
    const state = this.providers.peek(r.provider);
    if (prev?.kind === "residency" && state !== undefined && overlayCurrent(state, prev.residency)) {
      const p = prev.residency;
      const loadMs = p.loadMs ?? r.loadMs;
      if (p.modelFootprintMiB === r.modelFootprintMiB && p.loadMs === loadMs) return;
      r = {
        ...r,
        ...(p.writtenAt !== undefined ? { writtenAt: p.writtenAt } : {}),
        ...(loadMs !== undefined ? { loadMs } : {}),
      };
    }
    await this.bucket.put(key, encodeJson(residencyJson(r)));
  }

  /**
   * Marks a provider unreachable as of `sinceMs` (a refused or reset connection): planners
   * skip it until a probe newer than that. The mark lives until the bucket's TTL.
   */
  async markSuspect(provider: string, sinceMs: number, by: string): Promise<void> {
    assertProviderName(provider);
    await this.bucket.put(this.o.keys.suspect(provider), encodeJson(suspectJson({ provider, sinceMs, by })));
  }

  /**
   * Publishes where `agent`'s conversation last ran (docs/rules/placement.md §5.5): one key per
   * conversation and provider, written by its own sidecar only, living until the bucket's TTL.
   */
  async writeConversation(c: ConversationSeen, agent: string): Promise<void> {
    assertProviderName(c.provider);
    await this.bucket.put(
      this.o.keys.conversation(c.provider, agent, c.key),
      encodeJson(conversationJson(c)),
    );
  }

  /** Withdraws a conversation from a provider it left. */
  async deleteConversation(provider: string, agent: string, key: string): Promise<void> {
    assertProviderName(provider);
    await this.bucket.delete(this.o.keys.conversation(provider, agent, key));
  }

  /**
   * Every conversation record the copies hold, indexed for decisions: decisions read them on
   * every placement, and they change once every few turns of a conversation. Rebuilt when their
   * number changed, else at most every CONVERSATIONS_REREAD_MS (a record rewritten in place is
   * seen that much later: records are hints).
   */
  private conversationIndex(): ConversationIndex {
    const groups: { copy: TicketsMirror; name: string }[] = [];
    let count = 0;
    for (const copy of this.copies.copies()) {
      for (const name of copy.groupNames()) {
        if (!name.startsWith(CONVERSATION_GROUP)) continue;
        groups.push({ copy, name });
        count += copy.groupSize(name);
      }
    }
    const c = this.conversationsCache;
    const now = performance.now();
    if (c !== undefined && c.count === count && now - c.at < CONVERSATIONS_REREAD_MS) return c.index;
    const list: ConversationSeen[] = [];
    for (const { copy, name } of groups)
      for (const e of copy.group(name)) if (e.value?.kind === "conversation") list.push(e.value.conversation);
    const index = indexConversations(list);
    this.conversationsCache = { count, at: now, index };
    return index;
  }

  /** Drops a residency overlay (after an unload). */
  async clearResidency(provider: string, model: string): Promise<void> {
    assertProviderName(provider);
    await this.bucket.delete(this.o.keys.residency(provider, model));
  }

  /** Live tickets of a provider (exact `<provider>__` prefix), read at most 200 ms old. */
  async tickets(provider: string): Promise<Ticket[]> {
    const copy = this.copies.of(provider);
    await copy.fresh();
    return providerTickets(copy, provider, this.o.now());
  }

  /** Residency overlays of a provider, read at most 200 ms old. */
  async residencies(provider: string): Promise<Residency[]> {
    const copy = this.copies.of(provider);
    await copy.fresh();
    return providerResidencies(copy, provider);
  }

  /** A provider's state, tickets, residencies and budget, read at most 200 ms old. */
  async view(provider: string): Promise<ProviderView> {
    const copy = this.copies.of(provider);
    await Promise.all([copy.fresh(), this.providers.fresh(undefined, provider)]);
    const now = this.o.now();
    const liveNow = now - this.o.leaseGraceMs;
    const state = this.providers.peek(provider);
    const tickets = providerTickets(copy, provider, liveNow);
    const residencies = providerResidencies(copy, provider);
    return {
      state,
      tickets,
      residencies,
      budget: state === undefined ? undefined : budgetView(state, tickets, residencies, liveNow),
    };
  }

  /**
   * Live tickets and residency overlays of every provider followed here, in one pass over the
   * copies (the planner's snapshot: it runs on every placement, so it reads each copy once).
   * With `models` (the call's candidates), every provider whose state offers one is followed
   * first (tickets-copies.ts).
   */
  async everything(models?: Iterable<string>): Promise<{
    tickets: Ticket[];
    residencies: Residency[];
    suspects: Map<string, number>;
    conversations: ConversationIndex;
  }> {
    if (models !== undefined) this.copies.interest(models);
    await this.copies.fresh();
    const now = this.o.now();
    const tickets: Ticket[] = [];
    const residencies: Residency[] = [];
    const suspects = new Map<string, number>();
    const conversations = this.conversationIndex();
    for (const copy of this.copies.copies()) {
      // By provider: the conversation records' groups are read apart (conversationList).
      for (const name of copy.groupNames()) {
        if (name.startsWith(CONVERSATION_GROUP)) continue;
        for (const e of copy.group(name)) {
          const v = e.value;
          if (v?.kind === "ticket") {
            // A ticket released here is over for the planner even before its delete lands.
            if (this.engine.mine.releasedHere(v.ticket)) continue;
            if (v.ticket.expiresAt === undefined || v.ticket.expiresAt > now) tickets.push(v.ticket);
          } else if (v?.kind === "residency") {
            residencies.push(v.residency);
          } else if (v?.kind === "suspect") {
            suspects.set(v.suspect.provider, v.suspect.sinceMs);
          }
        }
      }
    }
    // What this process was just granted counts before the watch delivers it back.
    for (const t of this.engine.mine.unseen())
      if (t.expiresAt === undefined || t.expiresAt > now) tickets.push(t);
    return { tickets, residencies, suspects, conversations };
  }

  /**
   * A live ticket by id, on any provider (a restarted sidecar ends its predecessor's tickets):
   * from the copies, else, where the layout can name it, read from the bucket itself.
   */
  async find(ticketId: string): Promise<Ticket | undefined> {
    const now = this.o.now();
    for (const t of (await this.everything()).tickets) if (t.ticketId === ticketId) return t;
    const filter = this.o.keys.ticketByIdFilter(ticketId);
    if (filter === undefined || !this.copies.scoped) return undefined;
    const e = await this.bucket.last(filter);
    if (e === null || e.operation !== "PUT") return undefined;
    const k = this.o.keys.parse(e.key);
    if (k.kind !== "ticket") return undefined;
    let t: Ticket | undefined;
    try {
      t = parseTicket(decodeJson(e.value), k);
    } catch {
      return undefined;
    }
    return t !== undefined && (t.expiresAt === undefined || t.expiresAt > now) ? t : undefined;
  }

  /** Live tickets of every provider, grouped by provider. */
  async allTickets(): Promise<Map<string, Ticket[]>> {
    const out = new Map<string, Ticket[]>();
    for (const t of (await this.everything()).tickets) {
      const list = out.get(t.provider);
      if (list === undefined) out.set(t.provider, [t]);
      else list.push(t);
    }
    return out;
  }
}

function notFound(ref: TicketRef, why: string): KubemootError {
  return new KubemootError(ErrorCode.NotFound, `ticket ${ref.ticketId} on ${ref.provider}: ${why}`);
}
