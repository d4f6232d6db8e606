// The inference calls in flight on one proxy: counted for the onInflight hook and for drain,
// which waits (bounded) until none is left, and kept so that close can wait for their ends.
import type { ProxyHooks } from "./options.js";

export class CallsInFlight {
  private count = 0;
  private readonly calls = new Set<Promise<void>>();
  private readonly idleWaiters = new Set<() => void>();

  constructor(private readonly hooks: ProxyHooks) {}

  get size(): number {
    return this.count;
  }

  /** Counts one call from now until `run` settles. */
  track(run: () => Promise<void>): void {
    this.count++;
    this.hooks.onInflight?.(this.count);
    const p: Promise<void> = run().finally(() => {
      this.calls.delete(p);
      this.count--;
      this.hooks.onInflight?.(this.count);
      if (this.count === 0) for (const w of this.idleWaiters) w();
    });
    this.calls.add(p);
  }

  /** Resolves true once no call is left, or false after `timeoutMs`. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(
        () => {
          this.idleWaiters.delete(done);
          resolve(this.count === 0);
        },
        Math.max(0, timeoutMs),
      );
      const done = () => {
        clearTimeout(timer);
        this.idleWaiters.delete(done);
        resolve(true);
      };
      this.idleWaiters.add(done);
    });
  }

  /** Waits for every call to end, at most `timeoutMs`. */
  async settled(timeoutMs: number): Promise<void> {
    await Promise.race([
      Promise.allSettled([...this.calls]),
      new Promise((r) => setTimeout(r, timeoutMs).unref()),
    ]);
  }
}
