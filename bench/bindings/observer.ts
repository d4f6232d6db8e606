// What a sidecar sees, for `bench bindings` (docs/benchmarks.md "bindings"): the plain
// @nats-io/kv client (none of src/state) on a NATS connection of its own watches
// kubemoot_discussion_bindings (`>`, first the last value of every key) and
// kubemoot_provider_state, and notes when each new value arrived here (performance.now()) with
// the fields of docs/rules/state.md §2.5 it needs (kind, provider, revision). Listeners are told
// of every value as it arrives, in the watch's order.
import { type KV, Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";

export interface SeenBinding {
  kind: string;
  provider: string | undefined;
  /** The binder's revision of the (thread, phase), not the KV one. */
  revision: number;
  /** performance.now() at arrival. */
  at: number;
}

export interface SeenProviderState {
  ready: boolean;
  lastProbedAt: string;
  at: number;
}

type Listener<T> = (key: string, value: T | undefined) => void;

const BINDINGS_BUCKET = "kubemoot_discussion_bindings";
const PROVIDER_STATE_BUCKET = "kubemoot_provider_state";

export class BucketObserver {
  /** The latest binding of every key (deleted keys removed). */
  readonly bindings = new Map<string, SeenBinding>();
  /** The latest state of every provider (offer keys `_o.*` left out). */
  readonly providers = new Map<string, SeenProviderState>();
  /** performance.now() of the last binding value (or delete) that arrived. */
  lastBindingAt = 0;
  /** Binding values (and deletes) received since start. */
  bindingUpdates = 0;
  private readonly bindingListeners = new Set<Listener<SeenBinding>>();
  private readonly providerListeners = new Set<Listener<SeenProviderState>>();
  private readonly watches: { stop(): void }[] = [];
  private readonly loops: Promise<void>[] = [];

  private constructor(private readonly nc: NatsConnection) {}

  /** Connects, opens both buckets (retrying until the operator created them) and watches them. */
  static async start(servers: string, timeoutMs = 30_000): Promise<BucketObserver> {
    const nc = await connect({ servers, name: "bench-bindings-observer" });
    const o = new BucketObserver(nc);
    try {
      const kvm = new Kvm(nc);
      const [bindings, states] = await Promise.all([
        openWhenThere(kvm, BINDINGS_BUCKET, timeoutMs),
        openWhenThere(kvm, PROVIDER_STATE_BUCKET, timeoutMs),
      ]);
      await o.follow(bindings, (key, value, at) => o.onBinding(key, value, at));
      await o.follow(states, (key, value, at) => o.onProviderState(key, value, at));
    } catch (err) {
      await o.stop();
      throw err;
    }
    return o;
  }

  onBindingChange(l: Listener<SeenBinding>): () => void {
    this.bindingListeners.add(l);
    return () => this.bindingListeners.delete(l);
  }

  onProviderChange(l: Listener<SeenProviderState>): () => void {
    this.providerListeners.add(l);
    return () => this.providerListeners.delete(l);
  }

  async stop(): Promise<void> {
    for (const w of this.watches) w.stop();
    await Promise.allSettled(this.loops);
    await this.nc.close().catch(() => undefined);
  }

  private async follow(
    kv: KV,
    apply: (key: string, value: Record<string, unknown> | undefined, at: number) => void,
  ): Promise<void> {
    const it = await kv.watch({ key: ">" });
    this.watches.push(it);
    this.loops.push(
      (async () => {
        for await (const e of it) {
          const at = performance.now();
          let value: Record<string, unknown> | undefined;
          if (e.operation === "PUT") {
            try {
              value = e.json<Record<string, unknown>>();
            } catch {
              continue;
            }
          }
          apply(e.key, value, at);
        }
      })(),
    );
  }

  private onBinding(key: string, v: Record<string, unknown> | undefined, at: number): void {
    this.lastBindingAt = at;
    this.bindingUpdates++;
    let seen: SeenBinding | undefined;
    if (v === undefined) this.bindings.delete(key);
    else {
      seen = {
        kind: String(v.kind),
        provider: typeof v.provider === "string" ? v.provider : undefined,
        revision: Number(v.revision),
        at,
      };
      this.bindings.set(key, seen);
    }
    for (const l of this.bindingListeners) l(key, seen);
  }

  private onProviderState(key: string, v: Record<string, unknown> | undefined, at: number): void {
    if (key.startsWith("_")) return;
    let seen: SeenProviderState | undefined;
    if (v === undefined) this.providers.delete(key);
    else {
      seen = { ready: v.ready === true, lastProbedAt: String(v.lastProbedAt ?? ""), at };
      this.providers.set(key, seen);
    }
    for (const l of this.providerListeners) l(key, seen);
  }
}

async function openWhenThere(kvm: Kvm, name: string, timeoutMs: number): Promise<KV> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const kv = await kvm.open(name);
      await kv.status();
      return kv;
    } catch (err) {
      if (performance.now() > deadline) throw new Error(`bucket ${name} not there: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Resolves when `test` holds (checked now, then every 5 ms), or rejects after `timeoutMs`.
 * Only for waiting: the times measured are the arrivals the watches noted.
 */
export function until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    if (test()) return resolve();
    const timer = setInterval(() => {
      if (test()) {
        clearInterval(timer);
        resolve();
      } else if (performance.now() > deadline) {
        clearInterval(timer);
        reject(new Error(`timed out after ${timeoutMs} ms: ${what}`));
      }
    }, 5);
  });
}
