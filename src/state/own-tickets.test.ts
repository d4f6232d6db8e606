import { afterEach, describe, expect, it } from "vitest";
import { ticket as fixtureTicket } from "../../test/helpers/core-fixtures.js";
import { memoryTicketsMirror } from "../../test/helpers/state-fixtures.js";
import { encodeJson } from "./kv.js";
import type { BucketMirror } from "./mirror.js";
import { OwnTickets } from "./own-tickets.js";
import { ticketJson } from "./ticket-codec.js";
import { keyLayout } from "./ticket-keys.js";
import { TicketsCopies } from "./tickets-copies.js";
import type { TicketsValue } from "./tickets-view.js";

const keys = keyLayout("scoped");

const mirrors: BucketMirror<TicketsValue>[] = [];
afterEach(() => {
  for (const m of mirrors.splice(0)) m.close();
});

async function setup() {
  const { bucket, mirror } = await memoryTicketsMirror();
  mirrors.push(mirror);
  const copies = new TicketsCopies({ keys, scope: "all", make: () => mirror }, bucket);
  return { bucket, mirror, mine: new OwnTickets(copies, keys) };
}

/** A live qwen3:8b ticket with the given id (ids are UUIDs, as the key format wants). */
const ticket = (provider: string, ticketId: string) =>
  fixtureTicket(provider, "qwen3:8b", { ticketId, expiresAt: Date.now() + 150_000 });

describe("own tickets", () => {
  it("a ticket released here holds no slot while the copy still shows it, and is dropped once it shows the delete", async () => {
    const { bucket, mirror, mine } = await setup();
    const t = ticket("gpu-a", "11111111-1111-4111-8111-111111111111");
    const key = keys.ticket(t);
    await bucket.put(key, encodeJson(ticketJson(t)));
    await mirror.fresh();
    expect([mine.holdsSlot(t), mine.releasedHere(t)]).toEqual([true, false]);

    mine.forget(t);
    expect(mirror.holdsLive(key)).toBe(true); // the delete has not landed
    expect([mine.holdsSlot(t), mine.releasedHere(t)]).toEqual([false, true]);
    // The same id on another provider is another ticket.
    const other = ticket("gpu-b", t.ticketId);
    expect([mine.holdsSlot(other), mine.releasedHere(other)]).toEqual([true, false]);

    await bucket.delete(key);
    await mirror.fresh();
    expect(mine.holdsSlot(t)).toBe(false);
    // That check saw the delete and forgot the ticket: nothing is kept for it any more.
    expect(mine.releasedHere(t)).toBe(false);
  });

  it("lists a grant until the copy shows its write, for its provider only", async () => {
    const { bucket, mirror, mine } = await setup();
    const a = ticket("gpu-a", "22222222-2222-4222-8222-222222222222");
    const b = ticket("gpu-b", "33333333-3333-4333-8333-333333333333");
    mine.grant(keys.ticket(a), a);
    mine.grant(keys.ticket(b), b);
    expect(mine.unseen("gpu-a").map((t) => t.ticketId)).toEqual([a.ticketId]);
    expect(mine.unseen().length).toBe(2);
    await bucket.put(keys.ticket(a), encodeJson(ticketJson(a)));
    await mirror.fresh();
    expect(mine.unseen().map((t) => t.ticketId)).toEqual([b.ticketId]);
    // A grant released before its write shows is no longer ours either.
    mine.forget(b);
    expect(mine.unseen()).toEqual([]);
  });

  it("bounds what it keeps of released tickets: a sweep drops those the copy no longer holds", async () => {
    const { mirror, mine } = await setup();
    const held = ticket("gpu-a", "44444444-4444-4444-8444-444444444444");
    mine.forget(held);
    for (let i = 0; i < 1100; i++) {
      const t = ticket("gpu-a", `55555555-5555-4555-8555-${String(i).padStart(12, "0")}`);
      mine.forget(t);
    }
    await mirror.fresh();
    // None of them is in the copy: the sweeps past 1024 dropped them all but the latest few.
    expect(mine.releasedHere(held)).toBe(false);
  });
});
