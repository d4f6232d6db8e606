// Writing the tickets of a committed decision (docs/rules/state.md §6, step 5). A claim is
// granted only once its ticket is in the bucket: a grant nobody can see would hold room that
// other sidecars count only through the guard, and a slot they cannot count at all. A write that
// fails while NATS is away is retried within the claim; a ticket that still cannot be written
// is refused StateUnavailable and gets a tombstone, so no copy waits for it and it can never be
// written later.
import type { Ticket } from "../core/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import type { ClaimEngineOptions } from "./claim-types.js";
import { encodeJson } from "./kv.js";
import { ticketJson } from "./ticket-codec.js";

/** Retries of a ticket's write after it failed, the first after this long (ms), doubling. */
const WRITE_RETRIES = 4;
const WRITE_RETRY_MS = 100;
/** Tries of a tombstone for a ticket that was not granted, the first at once, doubling from this (ms). */
const TOMBSTONE_TRIES = 5;
const TOMBSTONE_RETRY_MS = 200;
/** How many written ticket ids are remembered. */
const WRITTEN_MAX = 4096;

export interface WriteOutcome {
  /** Tickets that could not be written (not to be granted), and why. */
  failed: Set<Ticket>;
  error: unknown;
}

export class TicketWrites {
  /** Ids of tickets known to be written or ended (recent ones, bounded). */
  private readonly written = new Set<string>();

  constructor(private readonly o: Pick<ClaimEngineOptions, "tickets" | "keys" | "logger">) {}

  has(ticketId: string): boolean {
    return this.written.has(ticketId);
  }

  /** Remembers a ticket as written (or ended): no decision needs to wait for it. */
  mark(ticketId: string): void {
    this.written.add(ticketId);
    if (this.written.size > WRITTEN_MAX) this.written.delete(this.written.values().next().value as string);
  }

  /**
   * Writes a decision's tickets. When one of them plans evictions, a later one may rely on its
   * credit, so they go in decision order and stop at the first that fails (every written subset
   * is then a prefix, which fits); otherwise each goes on its own.
   */
  async writeDecided(tickets: readonly Ticket[]): Promise<WriteOutcome> {
    const failed = new Set<Ticket>();
    let error: unknown;
    if (tickets.some((t) => Object.keys(t.evicts).length > 0)) {
      for (const t of tickets) {
        if (failed.size > 0) {
          failed.add(t);
          continue;
        }
        await this.writeRetrying(t).catch((err: unknown) => {
          failed.add(t);
          error = err;
        });
      }
    } else {
      await Promise.all(
        tickets.map((t) =>
          this.writeRetrying(t).catch((err: unknown) => {
            failed.add(t);
            error = err;
          }),
        ),
      );
    }
    for (const t of failed) this.abandon(t);
    return { failed, error };
  }

  /** Best effort, in the background: a tombstone keeps a ticket not granted from ever being written. */
  abandon(t: Ticket): void {
    void (async () => {
      for (let attempt = 0; attempt < TOMBSTONE_TRIES; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, TOMBSTONE_RETRY_MS * 2 ** attempt).unref());
        try {
          await this.o.tickets.delete(this.o.keys.ticket(t));
          this.mark(t.ticketId);
          return;
        } catch (err) {
          if (!KubemootError.is(err, ErrorCode.StateUnavailable)) return;
        }
      }
      // Left to its lease: the guard counts it until then, and nobody writes it.
      this.o.logger.warn({ ticketId: t.ticketId }, "state: could not end a ticket that was not granted");
    })();
  }

  /** One write at revision 0, retried while NATS is away; a conflict means it was written (or ended) before. */
  private async writeRetrying(t: Ticket): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.o.tickets.update(this.o.keys.ticket(t), encodeJson(ticketJson(t)), 0);
        this.mark(t.ticketId);
        return;
      } catch (err) {
        if (KubemootError.is(err, ErrorCode.StateConflict)) {
          this.mark(t.ticketId);
          return;
        }
        if (!KubemootError.is(err, ErrorCode.StateUnavailable) || attempt >= WRITE_RETRIES) throw err;
      }
      await new Promise((r) => setTimeout(r, WRITE_RETRY_MS * 2 ** attempt).unref());
    }
  }
}
