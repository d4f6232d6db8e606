// An unbounded push → async-iterate queue: the producer never waits, the consumer awaits the
// next item. Used to deliver watch events in order.

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private waiter: ((r: IteratorResult<T>) => void) | null = null;
  private ended = false;

  push(item: T): void {
    if (this.ended) return;
    if (this.waiter !== null) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: item, done: false });
      return;
    }
    this.items.push(item);
  }

  /** Ends the iteration after the items already queued are consumed. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.waiter !== null) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: undefined, done: true });
    }
  }

  get done(): boolean {
    return this.ended;
  }

  private next(): Promise<IteratorResult<T>> {
    if (this.head < this.items.length) {
      const value = this.items[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items.splice(0, this.head);
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.next(),
      return: () => {
        this.end();
        this.items.length = 0;
        this.head = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
