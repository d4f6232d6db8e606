// An independent check that the proxies never granted more than a card can hold: follows every
// revision of the tickets bucket (its own NATS connection, the plain KV client, none of
// src/state) and, per provider, adds up the footprints of the distinct models that hold live
// tickets. A revision where that sum exceeds the card's usable VRAM means two copies were
// promised room that only one has (an unload waits for its victim's tickets to end).
import { PROVIDER_TICKETS_BUCKET } from "../../src/state/buckets.js";
import { usable } from "../../test/helpers/contention/index.js";
import { TicketFollower } from "../../test/helpers/contention/ticket-follower.js";

const decoder = new TextDecoder();

export class UsableWatch {
  /** Revisions at which some provider's live tickets needed more than its usable VRAM. */
  aboveUsable = 0;
  revisions = 0;
  private readonly live = new Map<string, Map<string, { model: string; mib: number }>>();

  private constructor(private readonly totals: ReadonlyMap<string, number>) {}

  private follower: TicketFollower | undefined;

  static async start(servers: string, totals: ReadonlyMap<string, number>): Promise<UsableWatch> {
    const w = new UsableWatch(totals);
    w.follower = await TicketFollower.start(servers, PROVIDER_TICKETS_BUCKET, (e) => w.apply(e));
    return w;
  }

  private apply(e: { key: string; operation: string; value: Uint8Array }): void {
    this.revisions++;
    const i = e.key.indexOf("__");
    if (i <= 0 || e.key.startsWith("_")) return;
    const provider = e.key.slice(0, i);
    const total = this.totals.get(provider);
    if (total === undefined) return;
    let tickets = this.live.get(provider);
    if (tickets === undefined) {
      tickets = new Map();
      this.live.set(provider, tickets);
    }
    if (e.operation === "PUT") {
      try {
        const t = JSON.parse(decoder.decode(e.value)) as { modelName?: string; modelFootprintMiB?: number };
        tickets.set(e.key, { model: String(t.modelName ?? ""), mib: Number(t.modelFootprintMiB ?? 0) });
      } catch {
        return;
      }
    } else tickets.delete(e.key);
    const perModel = new Map<string, number>();
    for (const t of tickets.values()) perModel.set(t.model, Math.max(perModel.get(t.model) ?? 0, t.mib));
    let sum = 0;
    for (const mib of perModel.values()) sum += mib;
    if (sum > usable(total)) this.aboveUsable++;
  }

  /** Waits for every revision written so far, then stops following. */
  async finish(): Promise<void> {
    await this.follower?.caughtUp();
    await this.follower?.stop();
  }
}
