// Time for the emulated GPU. Every time inside the model of Ollama is *emulated* milliseconds,
// read and scheduled through this interface, so the same model runs in real time over HTTP
// (ScaledClock: emulated time flows 1/timeScale times as fast as wall time) and under a
// discrete-event simulation (ManualClock: time moves only when the driver advances it).

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Emulated milliseconds since the clock's origin. */
  now(): number;
  /** Runs `fn` once the emulated time reaches `at` (at once, asynchronously, if it has). */
  at(at: number, fn: () => void): TimerHandle;
  /**
   * The wall-clock instant (epoch ms) at which emulated time `t` happens (or happened).
   * Used for timestamps on the wire (created_at, expires_at), which other processes compare
   * with their own clocks.
   */
  wallTimeOf(t: number): number;
  /** Wall milliseconds that one emulated millisecond takes (the time scale). */
  readonly scale: number;
  /** Cancels every pending timer; the clock is unusable afterwards. */
  dispose(): void;
}

/**
 * Real time, scaled: at scale 0.01 one emulated second passes in 10 wall milliseconds.
 * Timers are wall `setTimeout`s at absolute emulated instants, so lateness never accumulates.
 */
export class ScaledClock implements Clock {
  readonly scale: number;
  private readonly originPerf: number;
  private readonly originWall: number;
  private readonly timers = new Set<NodeJS.Timeout>();
  private disposed = false;

  constructor(scale = 1) {
    if (!(scale > 0) || !Number.isFinite(scale)) throw new RangeError(`time scale must be > 0, got ${scale}`);
    this.scale = scale;
    this.originPerf = performance.now();
    this.originWall = Date.now();
  }

  now(): number {
    return (performance.now() - this.originPerf) / this.scale;
  }

  at(at: number, fn: () => void): TimerHandle {
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (this.disposed) return;
      const delay = Math.max(0, (at - this.now()) * this.scale);
      // setTimeout accepts at most 2^31-1 ms; anything further is "never" for an emulator run.
      if (delay > 2_147_483_647) return;
      // Node rounds delays to whole ms and measures from the loop's cached time, so a timer
      // can fire a little early: re-arm until emulated time has really reached `at`.
      timer = setTimeout(() => {
        if (timer) this.timers.delete(timer);
        timer = undefined;
        if (this.now() < at) arm();
        else fn();
      }, Math.ceil(delay));
      this.timers.add(timer);
    };
    arm();
    return {
      cancel: () => {
        if (timer) {
          clearTimeout(timer);
          this.timers.delete(timer);
          timer = undefined;
        }
      },
    };
  }

  wallTimeOf(t: number): number {
    return this.originWall + t * this.scale;
  }

  dispose(): void {
    this.disposed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * Virtual time for unit tests and simulations: nothing happens until `advance` or `runUntil`
 * moves the clock; timers due at the same instant fire in the order they were set.
 */
export class ManualClock implements Clock {
  readonly scale = 1;
  private t = 0;
  private seq = 0;
  private queue: ManualTimer[] = [];

  constructor(private readonly epochMs = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.t;
  }

  at(at: number, fn: () => void): TimerHandle {
    const timer: ManualTimer = { at: Math.max(at, this.t), seq: this.seq++, fn, cancelled: false };
    this.queue.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  wallTimeOf(t: number): number {
    return this.epochMs + t;
  }

  /** Emulated instant of the next pending timer, or undefined when none is pending. */
  nextAt(): number | undefined {
    let best: ManualTimer | undefined;
    for (const tm of this.queue) {
      if (tm.cancelled) continue;
      if (!best || tm.at < best.at || (tm.at === best.at && tm.seq < best.seq)) best = tm;
    }
    return best?.at;
  }

  /** Fires every timer due up to `until` (inclusive), in order, then sets the clock there. */
  runUntil(until: number): void {
    for (;;) {
      this.queue = this.queue.filter((tm) => !tm.cancelled);
      let best: ManualTimer | undefined;
      for (const tm of this.queue) {
        if (tm.at > until) continue;
        if (!best || tm.at < best.at || (tm.at === best.at && tm.seq < best.seq)) best = tm;
      }
      if (!best) break;
      best.cancelled = true;
      this.t = Math.max(this.t, best.at);
      best.fn();
    }
    this.t = Math.max(this.t, until);
  }

  advance(ms: number): void {
    this.runUntil(this.t + ms);
  }

  /** Runs until no timer is pending (or `limit` emulated ms pass, against endless loops). */
  runAll(limit = 1e12): void {
    const end = this.t + limit;
    for (;;) {
      const next = this.nextAt();
      if (next === undefined || next > end) break;
      this.runUntil(next);
    }
  }

  dispose(): void {
    this.queue = [];
  }
}
