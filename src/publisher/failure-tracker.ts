// Consecutive probe failures of one provider: it stays ready through short blips and is
// published ready=false after `threshold` failures in a row (default 3); one success makes it
// ready again. Pure state, no clock.

export const DEFAULT_FAILURE_THRESHOLD = 3;

export interface ProbeVerdict {
  ready: boolean;
  consecutiveFailures: number;
  /** This outcome flipped ready → not ready. */
  becameUnready: boolean;
  /** This outcome flipped not ready → ready. */
  recovered: boolean;
  /** The last failure's reason (kept until a success). */
  lastError: string | undefined;
}

export class ProbeFailureTracker {
  private failures = 0;
  private lastErrorText: string | undefined;
  readonly threshold: number;

  constructor(threshold = DEFAULT_FAILURE_THRESHOLD) {
    if (!Number.isInteger(threshold) || threshold < 1) {
      throw new RangeError(`failure threshold must be a positive integer, got ${threshold}`);
    }
    this.threshold = threshold;
  }

  get ready(): boolean {
    return this.failures < this.threshold;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  get lastError(): string | undefined {
    return this.lastErrorText;
  }

  success(): ProbeVerdict {
    const wasReady = this.ready;
    this.failures = 0;
    this.lastErrorText = undefined;
    return {
      ready: true,
      consecutiveFailures: 0,
      becameUnready: false,
      recovered: !wasReady,
      lastError: undefined,
    };
  }

  failure(reason: string): ProbeVerdict {
    const wasReady = this.ready;
    this.failures += 1;
    this.lastErrorText = reason;
    const ready = this.ready;
    return {
      ready,
      consecutiveFailures: this.failures,
      becameUnready: wasReady && !ready,
      recovered: false,
      lastError: reason,
    };
  }
}
