// The referee of a contention run: follows every revision of the tickets bucket (its own NATS
// connection, the plain KV client) into the independent overcommit checker, and remembers at
// which revision each ticket was written and deleted, to judge the claimers' reports by.
import type { ProviderState } from "../../../src/core/shapes.js";
import { PROVIDER_TICKETS_BUCKET } from "../../../src/state/buckets.js";
import {
  classifyTicketsKey,
  OvercommitChecker,
  type RefusalRecord,
  unjustifiedRefusals,
} from "./overcommit-checker.js";
import { type FollowedEntry, TicketFollower } from "./ticket-follower.js";

export class Referee {
  readonly checker: OvercommitChecker;
  /** Ticket id → revision at which it was written. */
  readonly putAt = new Map<string, number>();
  /** Ticket id → revision at which it was deleted. */
  readonly deletedAt = new Map<string, number>();
  private follower: TicketFollower | undefined;

  private constructor(private readonly states: ReadonlyMap<string, ProviderState>) {
    this.checker = new OvercommitChecker(new Map(states));
  }

  /** Starts following the tickets bucket; `onEntry` sees every entry too (e.g. to log it). */
  static async start(
    servers: string | string[],
    states: readonly ProviderState[],
    onEntry?: (e: FollowedEntry) => void,
  ): Promise<Referee> {
    const r = new Referee(new Map(states.map((s) => [s.name, s])));
    r.follower = await TicketFollower.start(servers, PROVIDER_TICKETS_BUCKET, (e) => {
      r.checker.apply(e.key, e.operation, e.value, e.revision);
      const { kind, id } = classifyTicketsKey(e.key);
      if (kind === "ticket") {
        if (e.operation === "PUT") r.putAt.set(id, e.revision);
        else r.deletedAt.set(id, e.revision);
      }
      onEntry?.(e);
    });
    return r;
  }

  /** How often the follower had to resume a stalled watch. */
  get restarts(): number {
    return this.follower?.restarts ?? 0;
  }

  /** Waits until every revision up to the bucket's head was checked, then stops following. */
  async finish(timeoutMs = 30_000): Promise<void> {
    await this.follower?.caughtUp(timeoutMs);
    await this.follower?.stop();
  }

  /** Granted tickets the bucket never showed written (there should be none). */
  unseen(granted: readonly string[]): string[] {
    return granted.filter((id) => !this.putAt.has(id));
  }

  /** Refusals that the state at their deciding revision does not justify (starved claims). */
  unjustified(refusals: readonly RefusalRecord[]): RefusalRecord[] {
    return unjustifiedRefusals(refusals, this.states, this.deletedAt);
  }
}
