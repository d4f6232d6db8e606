import { afterEach, describe, expect, it } from "vitest";
import { ticket as fixtureTicket } from "../../test/helpers/core-fixtures.js";
import { memoryTicketsMirror } from "../../test/helpers/state-fixtures.js";
import { unseenPending } from "./claim-guard.js";
import { encodeJson } from "./kv.js";
import type { BucketMirror } from "./mirror.js";
import { ticketJson } from "./ticket-codec.js";
import type { TicketsValue } from "./tickets-view.js";

const mirrors: BucketMirror<TicketsValue>[] = [];
afterEach(() => {
  for (const m of mirrors.splice(0)) m.close();
});

async function setup() {
  const fixture = await memoryTicketsMirror();
  mirrors.push(fixture.mirror);
  return fixture;
}

const ticket = (ticketId: string) =>
  fixtureTicket("gpu-a", "qwen3:8b", { ticketId, expiresAt: Date.now() + 150_000 });
const ids = (ts: { ticketId: string }[]) => ts.map((t) => t.ticketId);
const A = "11111111-1111-4111-8111-111111111111";
const B = "22222222-2222-4222-8222-222222222222";

describe("a guard's pending tickets the copy has not seen", () => {
  it("are those it holds neither a value nor a tombstone of, however often it is asked", async () => {
    const { keys, bucket, mirror } = await setup();
    const guard = { revision: 1, stateRevision: 0, pending: [ticket(A), ticket(B)] };
    const ask = () => ids(unseenPending(keys, mirror, "gpu-a", guard, Date.now()));
    expect(ask()).toEqual([A, B]);
    await bucket.put(keys.ticket(guard.pending[0]!), encodeJson(ticketJson(guard.pending[0]!)));
    await mirror.fresh();
    expect(ask()).toEqual([B]);
    await bucket.delete(keys.ticket(guard.pending[1]!));
    await mirror.fresh();
    expect(ask()).toEqual([]);
    expect(ask()).toEqual([]); // asked again: the same answer (now the remembered one)
  });

  it("counts them again once the copy was rebuilt without them", async () => {
    const { keys, kv, clock, bucket, mirror } = await setup();
    const guard = { revision: 1, stateRevision: 0, pending: [ticket(A)] };
    const key = keys.ticket(guard.pending[0]!);
    await bucket.put(key, encodeJson(ticketJson(guard.pending[0]!)));
    await mirror.fresh();
    expect(unseenPending(keys, mirror, "gpu-a", guard, Date.now())).toEqual([]);
    // Gone from the bucket by its TTL (the guard's copy of the ticket still reads live), then
    // the copy is rebuilt from a snapshot that never had it.
    clock.advance(700_000);
    const before = mirror.generation;
    kv.setOnline(false);
    kv.setOnline(true);
    await mirror.fresh();
    expect(mirror.generation).not.toBe(before);
    expect(mirror.knows(key)).toBe(false);
    expect(ids(unseenPending(keys, mirror, "gpu-a", guard, Date.now()))).toEqual([A]);
  });
});
