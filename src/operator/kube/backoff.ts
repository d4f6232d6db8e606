// Exponential backoff with optional jitter, for restarting failed watches.

export interface BackoffOptions {
  /** First delay; default 500 ms. */
  initialMs?: number;
  /** Cap; default 30 s. */
  maxMs?: number;
  /** Growth per failure; default 2. */
  factor?: number;
  /** ± fraction of random spread; default 0.2 (0 for deterministic tests). */
  jitter?: number;
  /** Random source in [0, 1); default Math.random. */
  random?: () => number;
}

export const DEFAULT_BACKOFF = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 } as const;

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private failures = 0;

  constructor(o: BackoffOptions = {}) {
    this.initialMs = o.initialMs ?? DEFAULT_BACKOFF.initialMs;
    this.maxMs = o.maxMs ?? DEFAULT_BACKOFF.maxMs;
    this.factor = o.factor ?? DEFAULT_BACKOFF.factor;
    this.jitter = o.jitter ?? DEFAULT_BACKOFF.jitter;
    this.random = o.random ?? Math.random;
    if (!(this.initialMs > 0) || !(this.maxMs >= this.initialMs) || !(this.factor >= 1)) {
      throw new RangeError("backoff: expected 0 < initialMs ≤ maxMs and factor ≥ 1");
    }
    if (!(this.jitter >= 0 && this.jitter < 1)) throw new RangeError("backoff: jitter must be in [0, 1)");
  }

  /** Consecutive failures so far. */
  get attempts(): number {
    return this.failures;
  }

  /** The delay before the next attempt; counts one more failure. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** Math.min(this.failures, 60));
    this.failures += 1;
    if (this.jitter === 0) return base;
    const spread = base * this.jitter * (2 * this.random() - 1);
    return Math.max(0, Math.min(this.maxMs, Math.round(base + spread)));
  }

  reset(): void {
    this.failures = 0;
  }
}
