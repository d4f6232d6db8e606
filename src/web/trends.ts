// The trends panel's series (docs/web-view.md "Trends"): 5-second buckets over the last hour of
// placed calls (weighted, so sampling keeps rates exact), their p95 wait, loads and unloads seen
// in the fleet's resident models, used VRAM per card, and refusals by reason. Time is passed
// in; memory is bounded by the window (720 buckets).
import { usedVram } from "./fleet-view.js";
import type { DecisionRecord, ProviderCard, TrendPoint, TrendSeries } from "./view-types.js";

export const TREND_STEP_MS = 5000;
export const TREND_WINDOW_MS = 60 * 60_000;

interface Bucket {
  start: number;
  calls: number;
  waits: [seconds: number, weight: number][];
  loads: number;
  unloads: number;
  refusals: Map<string, number>;
}

interface Closed {
  point: TrendPoint;
  refusals: Map<string, number>;
}

const MAX_WAIT_SAMPLES = 2000;

function empty(start: number): Bucket {
  return { start, calls: 0, waits: [], loads: 0, unloads: 0, refusals: new Map() };
}

/** Weighted p95 of [value, weight] samples; null when there are none. */
export function weightedP95(samples: readonly [number, number][]): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a[0] - b[0]);
  let total = 0;
  for (const [, w] of sorted) total += w;
  let acc = 0;
  for (const [v, w] of sorted) {
    acc += w;
    if (acc >= 0.95 * total) return v;
  }
  return sorted[sorted.length - 1]![0];
}

export class Trends {
  private readonly closed: Closed[] = [];
  private current: Bucket;
  private residents = new Map<string, Set<string>>();
  private vram: Record<string, number> = {};

  constructor(
    nowMs: number,
    private readonly stepMs = TREND_STEP_MS,
    private readonly windowMs = TREND_WINDOW_MS,
  ) {
    this.current = empty(this.align(nowMs));
  }

  record(r: DecisionRecord): void {
    const b = this.current;
    if (r.kind === "placed") {
      b.calls += r.weight;
      if (b.waits.length < MAX_WAIT_SAMPLES) b.waits.push([r.waitMs / 1000, r.weight]);
    } else if (r.kind === "refused" && r.reason) {
      b.refusals.set(r.reason, (b.refusals.get(r.reason) ?? 0) + r.weight);
    }
  }

  /** The fleet as it is now: a model newly resident on a card is a load, one gone an unload. */
  fleet(cards: readonly ProviderCard[]): void {
    const next = new Map<string, Set<string>>();
    for (const c of cards) {
      const models = new Set<string>();
      for (const s of c.vram) if (s.kind === "resident" && s.model !== undefined) models.add(s.model);
      next.set(c.name, models);
      const before = this.residents.get(c.name);
      if (before === undefined) continue; // first sight: a baseline, not loads
      for (const m of models) if (!before.has(m)) this.current.loads++;
      for (const m of before) if (!models.has(m)) this.current.unloads++;
    }
    this.residents = next;
    this.vram = usedVram(cards);
  }

  /** Closes every bucket that ended by `nowMs`; returns the points closed, oldest first. */
  tick(nowMs: number): TrendPoint[] {
    const out: TrendPoint[] = [];
    while (nowMs >= this.current.start + this.stepMs) {
      const b = this.current;
      const perS = 1000 / this.stepMs;
      const point: TrendPoint = {
        t: b.start,
        callsPerS: round3(b.calls * perS),
        waitP95S: weightedP95(b.waits),
        loadsPerMin: round3(b.loads * perS * 60),
        unloadsPerMin: round3(b.unloads * perS * 60),
        vramMiB: { ...this.vram },
      };
      this.closed.push({ point, refusals: b.refusals });
      out.push(point);
      // After a long pause, start at the current step rather than filling the gap one by one.
      const next = b.start + this.stepMs;
      this.current = empty(nowMs - next >= this.windowMs ? this.align(nowMs) : next);
    }
    const keep = Math.ceil(this.windowMs / this.stepMs);
    if (this.closed.length > keep) this.closed.splice(0, this.closed.length - keep);
    return out;
  }

  /** The closed points of the last `windowMs` (the whole window by default). */
  series(windowMs = this.windowMs): TrendSeries {
    const from = this.current.start - windowMs;
    return { stepMs: this.stepMs, points: this.closed.filter((c) => c.point.t >= from).map((c) => c.point) };
  }

  /** Refusals by reason over the window, the open bucket included. */
  refusals(): Map<string, number> {
    const out = new Map<string, number>();
    for (const m of [...this.closed.map((c) => c.refusals), this.current.refusals]) {
      for (const [reason, n] of m) out.set(reason, (out.get(reason) ?? 0) + n);
    }
    return out;
  }

  private align(ms: number): number {
    return Math.floor(ms / this.stepMs) * this.stepMs;
  }
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
