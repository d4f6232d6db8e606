// Fresh reads for a claim (docs/rules/state.md §4, §6): a decision reads the provider-state and
// tickets copies only once both are proven current within the decision age, and judges in the
// same synchronous run as that check. Used by the guarded path (claim.ts) and the warm path
// (claim-warm.ts) alike.
import { performance } from "node:perf_hooks";
import type { ClaimEngineOptions } from "./claim-types.js";
import { stateUnavailable } from "./kv-errors.js";

export class FreshCopies {
  constructor(
    private readonly o: Pick<ClaimEngineOptions, "copies" | "providers">,
    /** Age of the copies a decision may read (ms). */
    readonly decideAgeMs: number,
  ) {}

  /**
   * Proves both copies current at most the decision age old (the provider's tickets copy at or
   * after `since`).
   */
  async refresh(provider: string, since: number): Promise<void> {
    const { copies, providers } = this.o;
    await Promise.all([
      copies.of(provider).fresh(since, this.decideAgeMs),
      providers.fresh(this.decideAgeMs, provider),
    ]);
  }

  /**
   * Whether both copies are still within the decision age now. A caller checks it in the same
   * synchronous run as its decision: any await in between would let the copies age unseen.
   */
  freshEnough(provider: string): boolean {
    const { copies, providers } = this.o;
    const confirmedAt = Math.min(copies.of(provider).confirmedAt, providers.confirmedAt(provider));
    return performance.now() - confirmedAt <= this.decideAgeMs;
  }
}

export function notFreshTogether(): Error {
  return stateUnavailable("could not read provider state and tickets fresh together");
}
