// The referee's feed: follows every message of the tickets bucket in revision order over its
// own NATS connection, with the plain @nats-io/kv client (none of src/state). If its watch
// stalls (its consumer lived on a node that died), it resumes after the last revision it saw.
// The bucket keeps every revision it needs (setup.ts).
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";

export interface FollowedEntry {
  key: string;
  operation: string;
  value: Uint8Array;
  revision: number;
}

export class TicketFollower {
  last = 0;
  restarts = 0;
  /** Revisions that were never delivered (overwritten beyond the history before being read). */
  skipped = 0;
  private stopped = false;
  private current: { stop(): void } | null = null;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly bucket: string,
    private readonly onEntry: (e: FollowedEntry) => void,
  ) {}

  static async start(
    servers: string | string[],
    bucket: string,
    onEntry: (e: FollowedEntry) => void,
  ): Promise<TicketFollower> {
    const nc = await connect({ servers, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
    const f = new TicketFollower(nc, bucket, onEntry);
    await f.watch();
    return f;
  }

  /** Waits until every revision up to the bucket's head was delivered (restarting stalled watches). */
  async caughtUp(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastProgress = Date.now();
    let seen = this.last;
    for (;;) {
      let head = -1;
      try {
        const jsm = await jetstreamManager(this.nc, { timeout: 2000 });
        const info = await jsm.streams.info(`KV_${this.bucket}`);
        head = info.state.last_seq;
      } catch {
        // the cluster may be electing a leader
      }
      if (head >= 0 && this.last >= head) return;
      if (this.last !== seen) {
        seen = this.last;
        lastProgress = Date.now();
      } else if (Date.now() - lastProgress > 3000) {
        await this.watch();
        lastProgress = Date.now();
      }
      if (Date.now() > deadline) throw new Error(`follower stuck at ${this.last}, head ${head}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.stop();
    await this.nc.close();
  }

  private async watch(): Promise<void> {
    this.current?.stop();
    if (this.last > 0) this.restarts++;
    for (let attempt = 0; ; attempt++) {
      try {
        const kv = await new Kvm(this.nc).open(this.bucket);
        const it = await kv.watch(
          this.last > 0 ? { resumeFromRevision: this.last + 1 } : { include: "history" },
        );
        this.current = it;
        void (async () => {
          for await (const e of it) {
            if (e.revision <= this.last) continue;
            if (this.last > 0 && e.revision > this.last + 1) this.skipped += e.revision - this.last - 1;
            this.last = e.revision;
            this.onEntry({ key: e.key, operation: e.operation, value: e.value, revision: e.revision });
          }
        })();
        return;
      } catch (err) {
        if (this.stopped || attempt > 50) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}
