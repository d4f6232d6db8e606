// The capacity watch (docs/rules/placement.md §6): a change counter advanced by every provider-state
// and ticket change the watches deliver. A waiter records the counter, retries its placement,
// and blocks until the counter moves — state-driven, never a polling timer. When no watch is
// established it says so (kind "unavailable") so the caller stands aside instead of waiting blind.
import type { MirrorEvent } from "./mirror.js";

export type ChangeResult =
  /** The counter moved past `sinceCounter`. */
  | { kind: "changed"; counter: number }
  /** The deadline passed first. */
  | { kind: "deadline"; counter: number }
  /** The signal aborted the wait (the client cancelled). */
  | { kind: "aborted"; counter: number }
  /** No watch is established (NATS away, or lost during the wait). */
  | { kind: "unavailable"; counter: number; reason: string };

/** What the capacity watch follows: a mirror's availability and change events. */
export interface ChangeSource {
  readonly name: string;
  readonly available: boolean;
  onChange(listener: (ev: MirrorEvent<unknown>) => void): () => void;
}

export interface CapacityWatchOptions {
  sources: ChangeSource[];
  /** Wall clock (epoch ms) the deadlines are in. */
  now: () => number;
  /** Keys whose changes do not count (e.g. the claim guards, which precede a ticket write). */
  ignoreKey?: (key: string) => boolean;
}

interface Waiter {
  since: number;
  settle: (r: ChangeResult) => void;
}

export class CapacityWatch {
  private count = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(private readonly o: CapacityWatchOptions) {
    for (const s of o.sources) {
      this.unsubscribe.push(
        s.onChange((ev) => {
          if (ev.type === "availability") {
            if (!ev.available) this.settleAll({ kind: "unavailable", reason: `${s.name}: watch lost` });
            else this.advance(); // a rebuilt copy may differ from what the waiter saw
            return;
          }
          if (ev.type === "put" && o.ignoreKey?.(ev.entry.key)) return;
          if (ev.type === "delete" && o.ignoreKey?.(ev.key)) return;
          this.advance();
        }),
      );
    }
  }

  /** The current value of the change counter. */
  get counter(): number {
    return this.count;
  }

  /** True while every watch is established. */
  get available(): boolean {
    return this.o.sources.every((s) => s.available);
  }

  /**
   * Resolves when the counter exceeds `sinceCounter`, at `deadlineMs` (epoch ms, the store's
   * clock), when `signal` aborts, or at once with "unavailable" when no watch is established.
   */
  awaitChange(sinceCounter: number, deadlineMs: number, signal?: AbortSignal): Promise<ChangeResult> {
    if (signal?.aborted) return Promise.resolve({ kind: "aborted", counter: this.count });
    if (!this.available) {
      const down = this.o.sources.filter((s) => !s.available).map((s) => s.name);
      return Promise.resolve({
        kind: "unavailable",
        counter: this.count,
        reason: `no watch established on ${down.join(", ")}`,
      });
    }
    if (this.count > sinceCounter) return Promise.resolve({ kind: "changed", counter: this.count });
    const left = deadlineMs - this.o.now();
    if (left <= 0) return Promise.resolve({ kind: "deadline", counter: this.count });
    return new Promise((resolve) => {
      const onAbort = () => w.settle({ kind: "aborted", counter: this.count });
      const timer = setTimeout(() => w.settle({ kind: "deadline", counter: this.count }), left);
      const w: Waiter = {
        since: sinceCounter,
        settle: (r) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          this.waiters.delete(w);
          resolve(r);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(w);
    });
  }

  close(): void {
    for (const u of this.unsubscribe) u();
    this.unsubscribe.length = 0;
    this.settleAll({ kind: "unavailable", reason: "closed" });
  }

  private advance(): void {
    this.count++;
    for (const w of [...this.waiters])
      if (this.count > w.since) w.settle({ kind: "changed", counter: this.count });
  }

  private settleAll(r: { kind: "unavailable"; reason: string }): void {
    for (const w of [...this.waiters]) w.settle({ ...r, counter: this.count });
  }
}
