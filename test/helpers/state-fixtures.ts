// Builders for state tests: provider states in Kubemoot's shape, a manual clock, a tickets copy.
import type { ProviderState } from "../../src/core/shapes.js";
import { silentLogger } from "../../src/log/index.js";
import { MemoryKvStore } from "../../src/state/memory-kv.js";
import { BucketMirror } from "../../src/state/mirror.js";
import { keyLayout } from "../../src/state/ticket-keys.js";
import { type TicketsValue, ticketsDecoder } from "../../src/state/tickets-view.js";

export function providerState(name: string, over: Partial<ProviderState> = {}): ProviderState {
  return {
    name,
    endpoint: `http://${name}:11434`,
    maxParallel: 1,
    activeCount: 0,
    queueDepth: 0,
    loadedModels: Object.keys(over.loadedModelFootprintsMiB ?? {}),
    ready: true,
    lastProbedAt: new Date().toISOString(),
    totalVramMiB: 24563,
    loadedModelFootprintsMiB: {},
    availableModelFootprintsMiB: {},
    contextLength: 8192,
    loadedModelContextLengths: {},
    ...over,
  };
}

/** A manual clock for leases and expiry. */
export class ManualClock {
  constructor(public ms = Date.now()) {}
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * A tickets bucket on the in-memory store (its clock manual) and a copy following it in the
 * scoped key layout, started: the unit tests of what a copy knows. Close the mirror after.
 */
export async function memoryTicketsMirror() {
  const keys = keyLayout("scoped");
  const clock = new ManualClock();
  const kv = new MemoryKvStore({ now: clock.now });
  const bucket = await kv.bucket("t", { history: 1, ttlMs: 600_000, maxValueBytes: 0, replicas: 1 });
  const mirror = new BucketMirror<TicketsValue>({
    bucket,
    connection: kv.connection,
    decode: ticketsDecoder(keys, silentLogger),
    group: (k: string) => keys.providerOf(k),
    now: clock.now,
    catchUpTimeoutMs: 300,
  });
  await mirror.start();
  return { keys, clock, kv, bucket, mirror };
}
