// A budget on the request bytes the proxy holds at once. A call keeps its parsed body for as long
// as it runs, and the sidecar's V8 heap is bounded (the injected NODE_OPTIONS), so a burst of
// large prompts waits its turn here instead of aborting the process. Calls take the bytes their
// body declares (a body without a length counts as the largest allowed), first come first
// served; a body no larger than the budget always gets it eventually.

interface Waiter {
  bytes: number;
  grant: () => void;
}

export class ByteBudget {
  private used = 0;
  private readonly waiters: Waiter[] = [];

  /** @param capacityBytes the most bytes held at once (≥ the largest body allowed). */
  constructor(readonly capacityBytes: number) {}

  get usedBytes(): number {
    return this.used;
  }

  /**
   * Resolves with a release function once `bytes` (capped at the capacity) fit; rejects with the
   * signal's reason if it aborts first.
   */
  acquire(bytes: number, signal: AbortSignal): Promise<() => void> {
    const want = Math.max(0, Math.min(bytes, this.capacityBytes));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.used -= want;
      this.pump();
    };
    if (this.waiters.length === 0 && this.used + want <= this.capacityBytes) {
      this.used += want;
      return Promise.resolve(release);
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        bytes: want,
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        this.pump();
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(w);
    });
  }

  private pump(): void {
    while (this.waiters.length > 0 && this.used + this.waiters[0]!.bytes <= this.capacityBytes) {
      const w = this.waiters.shift()!;
      this.used += w.bytes;
      w.grant();
    }
  }
}
