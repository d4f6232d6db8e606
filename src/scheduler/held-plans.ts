// Held plans (planning at selection, docs/rules/placement.md §7): a claimed placement kept for
// a thread between Commit and its first Place, given up when unused for the plan's lifetime.
import type { SchedulerTimers, TimerHandle } from "./timers.js";
import type { PlacementOut } from "./types.js";

interface Held {
  placement: PlacementOut;
  timer: TimerHandle;
}

export class HeldPlans {
  private readonly held = new Map<string, Held>();

  constructor(private readonly timers: SchedulerTimers) {}

  /** Holds `placement` for the thread; `expire` runs if nobody takes it within `ttlMs`. */
  hold(key: string, placement: PlacementOut, ttlMs: number, expire: () => void): void {
    const timer = this.timers.after(ttlMs, expire);
    this.held.set(key, { placement, timer });
  }

  peek(key: string): PlacementOut | undefined {
    return this.held.get(key)?.placement;
  }

  /** Removes the thread's plan and returns it (its expiry cancelled). */
  take(key: string): PlacementOut | undefined {
    const h = this.held.get(key);
    if (!h) return undefined;
    h.timer.cancel();
    this.held.delete(key);
    return h.placement;
  }

  keys(): string[] {
    return [...this.held.keys()];
  }
}

/** The key of a thread's plan: threads are per agent. */
export function threadKey(agent: string, thread: string): string {
  return `${agent}\u0000${thread}`;
}
