// The discrete-event core: a binary heap of callbacks keyed by virtual time (ms), ties broken
// by insertion order, so a run is deterministic. `VirtualClock` lets the emulator's Ollama
// model (src/emulator/gpu.ts) run on this loop unchanged.
import type { Clock, TimerHandle } from "../emulator/index.js";

interface Entry {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

function before(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export class EventLoop {
  private heap: Entry[] = [];
  private seq = 0;
  private t = 0;
  private afterEach: (() => void | Promise<void>) | undefined;
  /** Events run so far. */
  processed = 0;

  /** Current virtual time (ms since the start of the run). */
  get now(): number {
    return this.t;
  }

  /** Runs `fn` at virtual time `at` (clamped to now: never in the past). */
  at(at: number, fn: () => void): TimerHandle {
    const e: Entry = { at: Math.max(at, this.t), seq: this.seq++, fn, cancelled: false };
    this.push(e);
    return {
      cancel: () => {
        e.cancelled = true;
      },
    };
  }

  /**
   * Called after every event (the simulation settles state changes there); the loop awaits it,
   * so asynchronous work an event started (the call loop's) finishes before time moves on.
   */
  onAfterEach(fn: () => void | Promise<void>): void {
    this.afterEach = fn;
  }

  /**
   * Runs every event due up to virtual time `until` (ms; default: until none is pending). With
   * a finite `until` the clock then stands at `until`, like a clock that has run that long.
   */
  async run(until = Number.POSITIVE_INFINITY): Promise<void> {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || top.at > until) break;
      this.pop();
      if (top.cancelled) continue;
      this.t = top.at;
      this.processed++;
      top.fn();
      const after = this.afterEach?.();
      if (after !== undefined) await after;
    }
    if (Number.isFinite(until)) this.t = Math.max(this.t, until);
  }

  get pending(): number {
    return this.heap.length;
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/**
 * The emulator's Clock over an EventLoop: emulated ms are virtual ms. `onFire` runs after
 * each of this clock's timers (the simulated Ollama uses it to notice its own transitions).
 */
export class VirtualClock implements Clock {
  readonly scale = 1;

  constructor(
    private readonly loop: EventLoop,
    private readonly epochMs: number,
    private readonly onFire: () => void = () => {},
  ) {}

  now(): number {
    return this.loop.now;
  }

  at(at: number, fn: () => void): TimerHandle {
    return this.loop.at(at, () => {
      fn();
      this.onFire();
    });
  }

  wallTimeOf(t: number): number {
    return this.epochMs + t;
  }

  dispose(): void {}
}
