// The scheduler's timers, passed in like its clock: the sidecar uses Node's, the simulation its
// virtual event loop, so held plans and retries fire at the same points of either timeline.

export interface TimerHandle {
  cancel(): void;
}

export interface SchedulerTimers {
  /** Runs `fn` once after `ms` (ms of the scheduler's clock); the handle cancels it. */
  after(ms: number, fn: () => void): TimerHandle;
  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void>;
}

/** Node's timers: `after` never keeps the process alive on its own; `sleep` does (a retry). */
export const realTimers: SchedulerTimers = {
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  },
};
