// What one process knows of its own tickets before its watched copy does: the tickets it was
// granted (read-your-writes for its planner and its slot checks) and the ones it released
// (their calls are over, so they hold no slot, though their delete has not landed yet).
import type { Ticket } from "../core/index.js";
import type { KeyLayout } from "./ticket-keys.js";
import type { TicketsCopies } from "./tickets-copies.js";

/** Released keys kept before a sweep drops those the copy shows deleted (bounds the memory). */
const RELEASED_SWEEP_AT = 1024;

export class OwnTickets {
  /** Granted and not released, by key, until the copy shows them. */
  private readonly granted = new Map<string, Ticket>();
  /**
   * Released, by ticket id, until the copy shows them deleted. By id, not key: slot checks ask
   * about every ticket of a model on each claim, and would otherwise build each one's key.
   */
  private readonly released = new Map<string, { key: string; provider: string }>();

  constructor(
    private readonly copies: TicketsCopies,
    private readonly keys: KeyLayout,
  ) {}

  grant(key: string, t: Ticket): void {
    this.granted.set(key, t);
  }

  /** A grant whose write failed: it never was. */
  revoke(key: string): void {
    this.granted.delete(key);
  }

  /** A ticket was released here: no longer ours, and no longer holding a slot. */
  forget(t: { provider: string; ticketId: string }, key = this.keys.ticket(t)): void {
    this.granted.delete(key);
    this.released.set(t.ticketId, { key, provider: t.provider });
    if (this.released.size > RELEASED_SWEEP_AT) {
      for (const [id, r] of this.released)
        if (!this.copies.following(r.provider)?.holdsLive(r.key)) this.released.delete(id);
    }
  }

  /** Granted tickets the copy has not delivered yet (of one provider, or all). */
  unseen(provider?: string): Ticket[] {
    const out: Ticket[] = [];
    for (const [key, t] of this.granted) {
      // Seen by its copy, or its provider no longer followed here (its lease has long passed).
      const m = this.copies.following(t.provider);
      if (m === undefined || m.knows(key)) {
        this.granted.delete(key);
        continue;
      }
      if (provider === undefined || t.provider === provider) out.push(t);
    }
    return out;
  }

  releasedHere(t: Ticket): boolean {
    return this.released.get(t.ticketId)?.provider === t.provider;
  }

  /** Whether a ticket still holds a slot: not released here (pruned once shown deleted). */
  holdsSlot(t: Ticket): boolean {
    const r = this.released.get(t.ticketId);
    if (r === undefined || r.provider !== t.provider) return true;
    if (this.copies.following(r.provider)?.shownDeleted(r.key)) this.released.delete(t.ticketId);
    return false;
  }
}
