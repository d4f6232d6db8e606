// How many decision records a sidecar publishes (docs/web-view.md "Decision records"): at most
// `ratePerS` a second, with a burst of one second's worth. A record that does not fit is not
// lost from the counts: the next record of its kind that is published carries its weight, so
// the view's rates and refusal counts stay exact while the records themselves are sampled.
export class DecisionSampler {
  private tokens: number;
  private last: number;
  private readonly skipped = new Map<string, number>();

  constructor(
    private readonly ratePerS: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = Math.max(1, ratePerS);
    this.last = now();
  }

  /** The weight to publish a record of `kind` with, or undefined to skip it (counted for the next). */
  take(kind: string): number | undefined {
    if (!(this.ratePerS > 0)) return undefined;
    const t = this.now();
    const burst = Math.max(1, this.ratePerS);
    this.tokens = Math.min(burst, this.tokens + ((t - this.last) / 1000) * this.ratePerS);
    this.last = t;
    const skipped = this.skipped.get(kind) ?? 0;
    if (this.tokens < 1) {
      this.skipped.set(kind, skipped + 1);
      return undefined;
    }
    this.tokens -= 1;
    this.skipped.delete(kind);
    return skipped + 1;
  }
}
