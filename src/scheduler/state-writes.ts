// Writes to the shared state that happen off the caller's path: a released ticket's delete
// (retried until its lease would end it anyway), what a successful call teaches (residency
// overlay, use demand) and where its conversation now lives. close() waits for every one of them.
import type { ConversationSeen } from "../core/index.js";
import type { CallEntry } from "./ledger.js";
import type { SchedulerStore } from "./store.js";
import type { SchedulerTimers } from "./timers.js";
import type { SchedulerHooks } from "./types.js";

/**
 * How long a use of a model waits for more uses before it is written (ms): the decayed rate
 * has a 10-minute half-life, so this delay is invisible to planners, and a busy model costs
 * one demand write per interval instead of one per call.
 */
const USE_LINGER_MS = 100;

/** Backoff of a ticket delete that failed (ms): first retry, and the longest wait between two. */
const RELEASE_RETRY_FIRST_MS = 100;
const RELEASE_RETRY_MAX_MS = 2000;

export class StateWrites {
  /** Residency overlays this sidecar wrote (provider, model → MiB), to skip rewriting them. */
  private readonly overlays = new Map<string, number>();
  private readonly pending = new Set<Promise<void>>();
  private closing = false;

  constructor(
    private readonly state: SchedulerStore,
    private readonly now: () => number,
    private readonly timers: SchedulerTimers,
    private readonly hooks: SchedulerHooks,
  ) {}

  /** The overlay of an unloaded model is gone: a later load writes it again. */
  forgetOverlay(provider: string, model: string): void {
    this.overlays.delete(overlayKey(provider, model));
  }

  /**
   * Sends the ticket's delete without making the caller wait for its acknowledgement: the
   * outcome is recorded already, and until the delete lands the ticket only counts a little
   * longer (never shorter), which the claim protocol allows. This process's next claim that
   * needs room waits for it (TicketBook), and close() waits for it. A failed delete is retried
   * with backoff until the lease would end the ticket anyway, or the sidecar closes.
   */
  deleteBehind(e: CallEntry): void {
    const ref = { provider: e.provider, ticketId: e.ticketId };
    const run = async (): Promise<void> => {
      for (let attempt = 0; ; attempt++) {
        try {
          await this.state.tickets.release(ref);
          return;
        } catch (err) {
          const delayMs = Math.min(RELEASE_RETRY_MAX_MS, RELEASE_RETRY_FIRST_MS * 2 ** attempt);
          const giveUp = this.closing || this.now() + delayMs >= e.expiresAtMs;
          this.hooks.onReleaseDeleteFailed?.(e.provider, !giveUp, err);
          if (giveUp) {
            this.warn("release (its lease will end the ticket)", err);
            return;
          }
          await this.timers.sleep(delayMs);
        }
      }
    };
    this.track(run());
  }

  /**
   * What a successful call teaches the shared state: the model is resident there (the
   * overlay bridges the gap until the next probe) and it was used (demand). The overlay is
   * written after a cold load or when its footprint changes; uses are coalesced per model.
   */
  afterSuccess(e: CallEntry): void {
    const key = overlayKey(e.provider, e.model);
    const writes: Promise<unknown>[] = [];
    // After a cold load the overlay is (re)written: it bridges the gap until a probe lists the
    // model, and its writtenAt lets core drop it once a later probe does not (an unload).
    // After a warm call the model was already counted resident: nothing to write.
    if (e.coldLoad || this.overlays.get(key) !== e.footprintMiB) {
      this.overlays.set(key, e.footprintMiB);
      writes.push(
        this.state.tickets
          .writeResidency({
            provider: e.provider,
            modelName: e.model,
            modelFootprintMiB: e.footprintMiB,
            writtenAt: this.now(),
            ...(e.coldLoad && e.loadMs > 0 ? { loadMs: e.loadMs } : {}),
          })
          .catch((err) => {
            this.overlays.delete(key);
            this.warn("residency", err);
          }),
      );
    }
    // The call's time without its load teaches every sidecar how long the model's calls take.
    const serviceMs = e.latencyMs > 0 ? Math.max(0, e.latencyMs - e.loadMs) : 0;
    writes.push(
      this.state.demand
        .recordUse(e.model, e.agent, USE_LINGER_MS, serviceMs, e.priority || undefined)
        .catch((err) => this.warn("use demand", err)),
    );
    this.track(Promise.all(writes).then(() => undefined));
  }

  /**
   * Publishes where a conversation's last turn ran (docs/rules/placement.md §5.5), and withdraws
   * it from the provider it ran on before, if it moved. `written` runs once the record is in.
   */
  publishConversation(
    record: ConversationSeen,
    agent: string,
    before: Pick<ConversationSeen, "provider" | "key"> | undefined,
    written: () => void,
  ): void {
    const writes: Promise<unknown>[] = [
      this.state.tickets
        .writeConversation(record, agent)
        .then(written, (err) => this.warn("conversation record", err)),
    ];
    if (before !== undefined && before.provider !== record.provider) {
      writes.push(
        this.state.tickets
          .deleteConversation(before.provider, agent, before.key)
          .catch((err) => this.warn("conversation record delete", err)),
      );
    }
    this.track(Promise.all(writes).then(() => undefined));
  }

  /** Tells the other sidecars that `provider` could not be reached (a refused or reset connection). */
  markSuspect(provider: string, sinceMs: number, by: string): void {
    this.track(
      this.state.tickets.markSuspect(provider, sinceMs, by).catch((err) => this.warn("suspect mark", err)),
    );
  }

  /** Stops retrying and waits for every write in flight. */
  async close(): Promise<void> {
    this.closing = true;
    await this.state.demand.flush().catch((err) => this.warn("use demand", err));
    await Promise.allSettled([...this.pending]);
  }

  private track(p: Promise<void>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private warn(what: string, err: unknown): void {
    this.hooks.log?.("warn", `${what} failed`, { err: err instanceof Error ? err.message : String(err) });
  }
}

function overlayKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}
