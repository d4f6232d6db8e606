// Requests in flight on one NATS connection, failed together the moment the connection drops.
// The client would leave them waiting for their timeout (a reply lost with the connection never
// comes), but callers must hear "unavailable" at once and treat the outcome as unknown
// (docs/rules/state.md §11).

export class InFlight {
  private readonly pending = new Set<(err: unknown) => void>();

  /** `p`, or a rejection as soon as the connection drops (or the store closes). */
  track<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (err: unknown) => {
        this.pending.delete(fail);
        reject(err);
      };
      this.pending.add(fail);
      p.then(
        (v) => {
          this.pending.delete(fail);
          resolve(v);
        },
        (err: unknown) => fail(err),
      );
    });
  }

  /** Fails every request in flight. */
  failAll(err: unknown): void {
    for (const fail of [...this.pending]) fail(err);
  }
}
