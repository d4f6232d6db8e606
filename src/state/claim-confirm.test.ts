// Confirming a warm ticket against decisions whose tickets landed after it (claim-confirm.ts).
import { afterEach, describe, expect, it } from "vitest";
import { ticket as fixtureTicket, T0 } from "../../test/helpers/core-fixtures.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import type { Ticket } from "../core/index.js";
import { silentLogger } from "../log/index.js";
import { bucketSettings, PROVIDER_TICKETS_BUCKET } from "./buckets.js";
import { decisionStillFits, warmStillFits } from "./claim-confirm.js";
import { encodeJson, type KvBucket } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { BucketMirror } from "./mirror.js";
import { guardJson, ticketJson } from "./ticket-codec.js";
import { keyLayout } from "./ticket-keys.js";

const keys = keyLayout("scoped");

import { type TicketsMirror, ticketsDecoder } from "./tickets-view.js";

const NOW = T0;
const ALPHA = providerState("flip", {
  totalVramMiB: 16384,
  loadedModelFootprintsMiB: { alpha: 9000 },
  lastProbedAt: "",
});
const EMPTY = providerState("flip", { totalVramMiB: 16384, lastProbedAt: "" });

/** A live 9000 MiB ticket on "flip". */
function ticket(id: string, model: string, over: Partial<Ticket> = {}): Ticket {
  return fixtureTicket("flip", model, { ticketId: id, modelFootprintMiB: 9000, ...over });
}

let kv: MemoryKvStore | undefined;
let mirror: TicketsMirror | undefined;
afterEach(async () => {
  mirror?.close();
  await kv?.close();
});

async function setup(): Promise<{ bucket: KvBucket; mirror: TicketsMirror }> {
  kv = new MemoryKvStore();
  const bucket = await kv.bucket(PROVIDER_TICKETS_BUCKET, bucketSettings(1)[PROVIDER_TICKETS_BUCKET]!);
  mirror = new BucketMirror({
    connection: kv.connection,
    now: () => NOW,
    bucket,
    decode: ticketsDecoder(keys, silentLogger),
    group: (k: string) => keys.providerOf(k),
    logger: silentLogger,
  });
  await mirror.start();
  return { bucket, mirror };
}

const put = (b: KvBucket, t: Ticket) =>
  b.put(keys.ticket({ provider: "flip", ticketId: t.ticketId }), encodeJson(ticketJson(t)));

describe("a warm ticket confirming itself", () => {
  it("counts a decision's ticket written after it, even once the copy has seen that write", async () => {
    const { bucket, mirror } = await setup();
    // A decision (on EMPTY: beta is a cold load) commits its guard; a warm alpha ticket is
    // written; then the decision's ticket lands; then a later decision replaces the guard.
    const beta = ticket("b1", "beta", { coldLoad: true });
    await bucket.put(keys.guard("flip"), encodeJson(guardJson({ pending: [beta], stateRevision: 0 })));
    const warm = ticket("w1", "alpha", { coldLoad: false });
    await put(bucket, warm);
    const landed = await put(bucket, beta);
    await bucket.put(keys.guard("flip"), encodeJson(guardJson({ pending: [], stateRevision: 0 })));
    expect(await mirror.waitForRevision(landed + 1, 1000)).toBe(true);
    for (const state of [ALPHA, EMPTY]) {
      const fits = warmStillFits({
        keys,
        mirror,
        state,
        ticket: warm,
        liveNowMs: NOW,
        slots: undefined,
        holdsSlot: () => true,
      });
      // alpha (9000) beside beta's load (9000) needs 18000 MiB of 14336 usable.
      expect(
        fits,
        `state with ${Object.keys(state.loadedModelFootprintsMiB).join() || "nothing"} resident`,
      ).toBe(false);
    }
  });

  it("still fits beside tickets of its own model, whenever they were written", async () => {
    const { bucket, mirror } = await setup();
    const warm = ticket("w1", "alpha");
    await put(bucket, warm);
    const last = await put(bucket, ticket("w2", "alpha"));
    expect(await mirror.waitForRevision(last, 1000)).toBe(true);
    expect(
      warmStillFits({
        keys,
        mirror,
        state: ALPHA,
        ticket: warm,
        liveNowMs: NOW,
        slots: undefined,
        holdsSlot: () => true,
      }),
    ).toBe(true);
  });
});

describe("a guard decision confirming itself", () => {
  it("withdraws a grant that takes the last slot a warm ticket written before its guard took", async () => {
    const { bucket, mirror } = await setup();
    // A warm alpha ticket lands before the decision's guard, unseen by the decision, which
    // granted another alpha ticket (one converging on alpha, or planning victims) on one slot.
    await put(bucket, ticket("w1", "alpha"));
    const committed = await bucket.put(
      keys.guard("flip"),
      encodeJson(guardJson({ pending: [], stateRevision: 0 })),
    );
    expect(await mirror.waitForRevision(committed, 1000)).toBe(true);
    const granted = ticket("g1", "alpha", { modelFootprintMiB: 9000 });
    const check = {
      mirror,
      state: ALPHA,
      provider: "flip",
      committed,
      counted: new Set<string>(),
      base: [],
      liveNowMs: NOW,
    };
    // Room alone: alpha is resident, the grant takes none.
    expect(decisionStillFits(check, [granted])).toEqual([true]);
    expect(decisionStillFits({ ...check, slots: new Map([["g1", 1]]) }, [granted])).toEqual([false]);
    expect(decisionStillFits({ ...check, slots: new Map([["g1", 2]]) }, [granted])).toEqual([true]);
    // A ticket this process released already holds no slot.
    expect(
      decisionStillFits({ ...check, slots: new Map([["g1", 1]]), holdsSlot: (t) => t.ticketId !== "w1" }, [
        granted,
      ]),
    ).toEqual([true]);
  });
});
