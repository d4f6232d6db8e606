// A model's slots (llama-server's -np, docs/rules/engines.md "A real llama.cpp engine"): each
// slot is one sequence of the model's context and keeps the tokens it last evaluated, so a
// prompt that starts the same way reuses them. A request takes the idle slot whose cache shares
// the longest prefix with its prompt (the least recently used among equals); with none idle it
// is deferred, first come first served, up to a bound, and leaves the queue if its client goes.
import { ErrorCode, invalidArgument, KubemootError } from "../errors/index.js";

/** What the pool needs of a sequence: the tokens its cache holds. */
export interface CachedSequence {
  readonly contextTokens: readonly number[];
}

/** What a slot is doing, for /slots (llama.cpp's per-slot fields). */
export interface SlotTask {
  idTask: number;
  nPrompt: number;
  nProcessed: number;
  nCache: number;
  nDecoded: number;
  nRemain: number;
  hasNewLine: boolean;
  params: Record<string, unknown>;
}

export interface Slot<S extends CachedSequence> {
  readonly id: number;
  readonly sequence: S;
  processing: boolean;
  lastUsedMs: number;
  /** The current or last task (absent on a slot never used). */
  task?: SlotTask;
}

/** Length of the common prefix of two token lists. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** The idle slot a prompt should take: the one asked for, else the longest cached prefix, else LRU. */
export function pickSlot<S extends CachedSequence>(
  idle: readonly Slot<S>[],
  prompt: readonly number[],
  idSlot: number,
): Slot<S> | undefined {
  if (idSlot >= 0) return idle.find((s) => s.id === idSlot);
  let best: Slot<S> | undefined;
  let bestShared = -1;
  for (const s of idle) {
    const shared = commonPrefix(s.sequence.contextTokens, prompt);
    if (
      shared > bestShared ||
      (shared === bestShared && best !== undefined && s.lastUsedMs < best.lastUsedMs)
    ) {
      best = s;
      bestShared = shared;
    }
  }
  return best;
}

interface Waiter<S extends CachedSequence> {
  prompt: readonly number[];
  idSlot: number;
  resolve(slot: Slot<S>): void;
  reject(err: unknown): void;
  detach(): void;
}

export class SlotPool<S extends CachedSequence> {
  readonly slots: readonly Slot<S>[];
  private readonly waiters: Waiter<S>[] = [];

  constructor(
    sequences: readonly S[],
    private readonly maxDeferred: number,
  ) {
    this.slots = sequences.map((sequence, id) => ({ id, sequence, processing: false, lastUsedMs: 0 }));
  }

  get processing(): number {
    return this.slots.filter((s) => s.processing).length;
  }

  get deferred(): number {
    return this.waiters.length;
  }

  /** A slot for `prompt`, now or once one frees; rejects when the queue is full or `signal` aborts. */
  acquire(prompt: readonly number[], idSlot: number, signal: AbortSignal): Promise<Slot<S>> {
    if (idSlot >= this.slots.length) {
      throw invalidArgument("id_slot", `there is no slot ${idSlot} (this model has ${this.slots.length})`);
    }
    if (this.waiters.length === 0) {
      const slot = pickSlot(this.idle(), prompt, idSlot);
      if (slot) return Promise.resolve(this.take(slot));
    }
    if (this.waiters.length >= this.maxDeferred) {
      const message = `${this.waiters.length} requests are already deferred: try again later`;
      return Promise.reject(new KubemootError(ErrorCode.Busy, message));
    }
    if (signal.aborted) return Promise.reject(canceled());
    return new Promise<Slot<S>>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(canceled());
      };
      const waiter: Waiter<S> = {
        prompt,
        idSlot,
        resolve,
        reject,
        detach: () => signal.removeEventListener("abort", onAbort),
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Frees `slot` and hands idle slots to the deferred requests, in order. */
  release(slot: Slot<S>, nowMs: number): void {
    slot.processing = false;
    slot.lastUsedMs = nowMs;
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i]!;
      const free = pickSlot(this.idle(), w.prompt, w.idSlot);
      if (!free) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      w.detach();
      w.resolve(this.take(free));
    }
  }

  /** Rejects every deferred request (the server is closing). */
  rejectAll(err: unknown): void {
    for (const w of this.waiters.splice(0)) {
      w.detach();
      w.reject(err);
    }
  }

  private idle(): Slot<S>[] {
    return this.slots.filter((s) => !s.processing);
  }

  private take(slot: Slot<S>): Slot<S> {
    slot.processing = true;
    return slot;
  }
}

function canceled(): KubemootError {
  return new KubemootError(ErrorCode.Canceled, "the client went away while its request was deferred");
}
