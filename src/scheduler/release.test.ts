// Release, on a real in-memory store.
// - A call that never reached the provider teaches nothing: repeated, it must not open the
//   provider's circuit, and it must not record the (never loaded) model as resident.
// - Release answers once the outcome is recorded; the ticket's delete goes out at once but the
//   caller does not wait for its acknowledgement. Holding or failing the bucket's deletes shows
//   what the caller and the shared state see meanwhile.
import { afterEach, expect, it } from "vitest";
import { wrapBuckets } from "../../test/helpers/kv-wrap.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import {
  bucketSettings,
  type KvStore,
  keyLayout,
  MemoryKvStore,
  openStateStore,
  PROVIDER_TICKETS_BUCKET,
  type StateStore,
} from "../state/index.js";
import { schedulerConfigFromEnv } from "./config.js";
import { type PlaceInput, type ReleaseInput, Scheduler, type SchedulerHooks } from "./scheduler.js";

const keys = keyLayout("scoped", "test");

const input: PlaceInput = {
  agent: "team/a",
  threadId: "",
  phase: "mulling",
  candidates: [{ model: "qwen3:8b", score: 50 }],
  promptTokens: 100,
  promptChars: 0,
  maxOutputTokens: 0,
  cannotWait: false,
};

const outcome = (ticketId: string, over: Partial<ReleaseInput> = {}): ReleaseInput => ({
  ticketId,
  latencyMs: 10,
  promptTokens: 0,
  promptChars: 0,
  outputTokens: 0,
  error: "",
  outcome: "succeeded",
  ...over,
});

/** A bucket whose deletes of tickets wait for `hold` (if set) and fail while `failures` > 0. */
interface Deletes {
  hold: Promise<void> | undefined;
  failures: number;
  attempts: number;
}

function withDeletes(inner: KvStore, d: Deletes): KvStore {
  return wrapBuckets(inner, (b) => ({
    delete: async (k, o) => {
      if (b.name === PROVIDER_TICKETS_BUCKET) {
        d.attempts++;
        if (d.hold !== undefined) await d.hold;
        if (d.failures > 0) {
          d.failures--;
          throw new KubemootError(ErrorCode.StateUnavailable, "test: NATS is away");
        }
      }
      return b.delete(k, o);
    },
  }));
}

let store: StateStore | undefined;
let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.close();
  await store?.close();
  scheduler = undefined;
  store = undefined;
});

interface Setup {
  deletes?: Deletes;
  hooks?: SchedulerHooks;
  /** The model is loaded on the provider already (warm calls); default true. */
  loaded?: boolean;
}

async function setup({ deletes, hooks = {}, loaded = true }: Setup = {}) {
  const kv = new MemoryKvStore();
  const d = deletes ?? { hold: undefined, failures: 0, attempts: 0 };
  store = await openStateStore(withDeletes(kv, d), { holderId: "test" });
  await store.providerWriter.publish(
    providerState("gpu", {
      endpoint: "http://127.0.0.1:9",
      maxParallel: 4,
      loadedModelFootprintsMiB: loaded ? { "qwen3:8b": 4863 } : {},
      availableModelFootprintsMiB: { "qwen3:8b": 4863 },
    }),
  );
  const s = new Scheduler({
    state: store,
    config: schedulerConfigFromEnv({}),
    ops: { unload: async () => {}, load: async () => {} },
    hooks,
  });
  scheduler = s;
  const bucket = await kv.bucket(PROVIDER_TICKETS_BUCKET, bucketSettings(1)[PROVIDER_TICKETS_BUCKET]!);
  const place = async () => {
    const out = await s.place(input);
    if (out.kind !== "placed") throw new Error(`refused: ${out.refusal.message}`);
    return out.placement;
  };
  return { bucket, place, scheduler: s, store, d };
}

/** A setup whose first `n` ticket deletes fail; `failures` lists what each failure reported (retry?). */
async function failingDeletes(n: number) {
  const d: Deletes = { hold: undefined, failures: n, attempts: 0 };
  const failures: boolean[] = [];
  const s = await setup({
    deletes: d,
    hooks: { onReleaseDeleteFailed: (_provider, willRetry) => failures.push(willRetry) },
  });
  return { ...s, failures };
}

async function until(what: string, check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// --- what a release teaches ------------------------------------------------------------------

it("never opens the circuit or records residency for calls that did not run", async () => {
  const { place, scheduler: s, store: st } = await setup({ loaded: false });
  const placeAndRelease = async () => {
    const p = await place();
    await s.release(outcome(p.ticketId, { outcome: "failed", ran: false, latencyMs: 0 }));
    return p.provider;
  };
  for (let i = 0; i < 5; i++) await placeAndRelease();
  expect(await placeAndRelease()).toBe("gpu");
  expect(await st.tickets.residencies("gpu")).toEqual([]);
});

it("opens the circuit after three failed calls that did run (the control case)", async () => {
  const { place, scheduler: s } = await setup({ loaded: false });
  for (let i = 0; i < 3; i++) {
    const p = await place();
    await s.release(outcome(p.ticketId, { outcome: "failed", latencyMs: 0 }));
  }
  const out = await s.place(input);
  expect(out.kind).toBe("refused");
});

// --- the delete behind the answer ------------------------------------------------------------

it("answers before the delete is acknowledged, learns the outcome at once, and close() waits for the delete", async () => {
  let letGo!: () => void;
  const d: Deletes = { hold: new Promise<void>((r) => (letGo = r)), failures: 0, attempts: 0 };
  const { bucket, place, scheduler: s } = await setup({ deletes: d });
  const p = await place();
  const key = keys.ticket(p);
  expect(await s.release(outcome(p.ticketId))).toBe(true);
  expect(d.attempts).toBe(1);
  expect(await bucket.get(key)).not.toBeNull(); // still there: the delete is held
  expect(s.attribute(p.ticketId)?.latencyMs).toBe(10); // the outcome is recorded already
  expect(await s.release(outcome(p.ticketId))).toBe(false); // idempotent meanwhile

  let closed = false;
  const closing = s.close().then(() => {
    closed = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  expect(closed).toBe(false); // shutdown does not leave a ticket behind
  letGo();
  await closing;
  expect(await bucket.get(key)).toBeNull();
});

it("retries a delete that failed until it lands, and reports each failure", async () => {
  const { d, failures, bucket, place, scheduler: s } = await failingDeletes(2);
  const p = await place();
  const key = keys.ticket(p);
  expect(await s.release(outcome(p.ticketId))).toBe(true);
  await until("the ticket is deleted", async () => (await bucket.get(key)) === null);
  expect(d.attempts).toBe(3);
  expect(failures).toEqual([true, true]);
});

it("gives a failing delete up at shutdown, leaving the ticket to its lease", async () => {
  const { failures, bucket, place, scheduler: s } = await failingDeletes(Number.POSITIVE_INFINITY);
  const p = await place();
  expect(await s.release(outcome(p.ticketId))).toBe(true);
  await until("the first delete failed", async () => failures.length > 0);
  await s.close(); // ends while the delete is failing: no hang
  expect(failures.at(-1)).toBe(false);
  expect(failures.slice(0, -1).every((retry) => retry)).toBe(true);
  const left = await bucket.get(keys.ticket(p));
  expect(left).not.toBeNull();
});

it("a Release without an outcome is neutral: any number of them never opens the circuit", async () => {
  const { place, scheduler: s } = await setup({ loaded: false });
  for (let i = 0; i < 5; i++) {
    const p = await place();
    await s.release(outcome(p.ticketId, { outcome: "unspecified", latencyMs: 0 }));
  }
  const out = await s.place(input);
  expect(out.kind).toBe("placed");
});
