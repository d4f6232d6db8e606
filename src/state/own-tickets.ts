// What one process knows of its own tickets before its watched copy does: the tickets it was
// granted (read-your-writes for its planner and its slot checks) and the ones it released
// (their calls are over, so they hold no slot, though their delete has not landed yet).
import type { Ticket } from "../core/shapes.js";
import { ticketKey } from "./ticket-keys.js";
import type { TicketsMirror } from "./tickets-view.js";

/** Released keys kept before a sweep drops those the copy shows deleted (bounds the memory). */
const RELEASED_SWEEP_AT = 1024;

export class OwnTickets {
  /** Granted and not released, by key, until the copy shows them. */
  private readonly granted = new Map<string, Ticket>();
  /** Released, by key, until the copy shows them deleted. */
  private readonly released = new Set<string>();

  constructor(private readonly mirror: TicketsMirror) {}

  grant(key: string, t: Ticket): void {
    this.granted.set(key, t);
  }

  /** A grant whose write failed: it never was. */
  revoke(key: string): void {
    this.granted.delete(key);
  }

  /** A ticket was released here: no longer ours, and no longer holding a slot. */
  forget(key: string): void {
    this.granted.delete(key);
    this.released.add(key);
    if (this.released.size > RELEASED_SWEEP_AT) {
      for (const k of this.released) if (this.mirror.seen(k)?.deleted !== false) this.released.delete(k);
    }
  }

  /** Granted tickets the copy has not delivered yet (of one provider, or all). */
  unseen(provider?: string): Ticket[] {
    const out: Ticket[] = [];
    for (const [key, t] of this.granted) {
      if (this.mirror.seen(key) !== undefined) {
        this.granted.delete(key);
        continue;
      }
      if (provider === undefined || t.provider === provider) out.push(t);
    }
    return out;
  }

  releasedHere(key: string): boolean {
    return this.released.has(key);
  }

  /** Whether a ticket still holds a slot: not released here (pruned once shown deleted). */
  holdsSlot(t: Ticket): boolean {
    const key = ticketKey(t.provider, t.ticketId);
    if (!this.released.has(key)) return true;
    if (this.mirror.seen(key)?.deleted === true) this.released.delete(key);
    return false;
  }
}
