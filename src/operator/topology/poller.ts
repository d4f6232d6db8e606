// Runs one tracker's poll on its interval: the first poll at once, the next `intervalMs` after
// the previous one finished (a timer chain, so two polls of one source never overlap), the
// timer unref'd so it never holds the process open. A status is also reported when the
// accepted snapshot goes out of force between polls, so Stale is not late by an interval.
import type { TopologySourceArm } from "./arm.js";
import type { TopologySourceStatus, TopologySourceTracker } from "./tracker.js";

/** How often a configMap source is re-read from the (cached) ConfigMap at most. */
export const CONFIGMAP_RECHECK_MS = 30_000;

/** The poll interval an arm calls for; undefined for nodeLabels (nothing to poll). */
export function pollIntervalFor(arm: TopologySourceArm): number | undefined {
  if (arm.kind === "nodeLabels") return undefined;
  if (arm.kind === "webhook") return arm.pollIntervalMs;
  // A ConfigMap is read on change by the operator (pollNow); the interval only re-checks.
  return Math.max(1000, Math.min(CONFIGMAP_RECHECK_MS, Math.floor(arm.maxStalenessMs / 2)));
}

export interface TopologySourcePollerOptions {
  tracker: Pick<TopologySourceTracker<unknown>, "arm" | "poll" | "status" | "staleAt">;
  /** Defaults to pollIntervalFor(tracker.arm). */
  intervalMs?: number;
  clock?: () => Date;
  /** Called with the status after every poll (and when the snapshot goes stale). */
  onStatus?: (status: TopologySourceStatus) => void;
}

export interface TopologySourcePoller {
  /** Polls now (e.g. on a ConfigMap change); joins a poll in flight and runs one more after. */
  pollNow(): Promise<void>;
  /** Stops the timer, cancels a read in flight and waits for it to settle. */
  stop(): Promise<void>;
}

export function startTopologySourcePoller(o: TopologySourcePollerOptions): TopologySourcePoller {
  const tracker = o.tracker;
  const clock = o.clock ?? (() => new Date());
  const intervalMs = o.intervalMs ?? pollIntervalFor(tracker.arm);
  const report = (s: TopologySourceStatus) => {
    try {
      o.onStatus?.(s);
    } catch {
      // A listener's failure must not stop the polling.
    }
  };
  if (intervalMs === undefined) {
    // nodeLabels: nothing to read; the status follows the Nodes (the operator asks status()).
    report(tracker.status(clock()));
    return { pollNow: async () => report(tracker.status(clock())), stop: async () => undefined };
  }
  if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0) {
    throw new RangeError(`poll interval must be a positive integer of ms, got ${intervalMs}`);
  }
  const abort = new AbortController();
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  const later = (fn: () => void, ms: number) => {
    timer = setTimeout(fn, Math.max(0, ms));
    timer.unref();
  };
  // Polls `intervalMs` after the last one; reports once more when the snapshot goes stale
  // first. Timers may fire a little early against the wall clock, so the stale report waits
  // until the clock has really reached staleAt.
  const schedule = () => {
    if (stopped) return;
    const due = clock().getTime() + intervalMs;
    const staleAt = tracker.staleAt();
    const untilDue = () => due - clock().getTime();
    const atStale = () => {
      const now = clock().getTime();
      if (staleAt !== undefined && now < staleAt) return later(atStale, staleAt - now);
      report(tracker.status(clock()));
      later(kick, untilDue());
    };
    const now = clock().getTime();
    if (staleAt !== undefined && staleAt > now && staleAt < due) later(atStale, staleAt - now);
    else later(kick, untilDue());
  };

  const run = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    if (timer) clearTimeout(timer);
    running = tracker
      .poll(clock(), abort.signal)
      .then(report, () => undefined)
      .finally(() => {
        running = undefined;
        if (stopped) return;
        if (again) {
          again = false;
          kick();
          return;
        }
        schedule();
      });
    return running;
  };
  const kick = () => {
    void run();
  };

  kick();
  return {
    pollNow: () => (stopped ? Promise.resolve() : run()),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      abort.abort();
      await running;
    },
  };
}
