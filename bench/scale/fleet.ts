// `bench scale`'s synthetic fleet (docs/benchmarks.md "scale"): its sizes, names, and the load
// generator that writes the KV traffic of N agent pods (one call per 10 s each: a ticket, its
// delete, a use record; provider states on change and as heartbeats) with the scoped layout's keys.
import { performance } from "node:perf_hooks";
import { agentHolderId, type KvBucket, keyLayout, type StateStore } from "../../src/state/index.js";
import { providerState } from "../../test/helpers/state-fixtures.js";

export const PROVIDERS = 200;
export const SIDECARS = 4;
export const PER_SIDECAR = 4;
export const CREW_PODS = 20;
const CALL_EVERY_S = 10;

const enc = new TextEncoder();
export const providerName = (i: number) => `gpu-${String(i).padStart(3, "0")}`;
export const modelOf = (i: number) => `m-${i}`;

export const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
/** Epoch ms with sub-millisecond resolution, comparable across processes on this machine. */
export const wall = () => performance.timeOrigin + performance.now();

/** One pod's call as KV writes: its ticket, the ticket's delete, a use record. */
export function ticketValue(
  provider: string,
  ticketId: string,
  model: string,
  holderId: string,
  sentAt?: number,
): Uint8Array {
  const now = Date.now();
  return enc.encode(
    JSON.stringify({
      ...(sentAt !== undefined ? { sentAt } : {}),
      ticketId,
      provider,
      modelFootprintMiB: 4000,
      kvCacheFootprintMiB: 0,
      holderId,
      claimedAt: new Date(now).toISOString(),
      modelName: model,
      evicts: {},
      expiresAt: now + 150_000,
      coldLoad: false,
    }),
  );
}

export class Load {
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;
  writes = 0;
  constructor(
    private readonly tickets: KvBucket,
    private readonly demand: KvBucket,
    private readonly state: StateStore,
  ) {}

  /** N pods: the crews' 20 pods each on their sidecar's providers, the rest on the others. */
  start(pods: number): void {
    this.stop();
    const watched = SIDECARS * PER_SIDECAR;
    // 0 pods: no calls at all, the provider states' heartbeats only.
    const crewRate = pods === 0 ? 0 : (SIDECARS * CREW_PODS) / CALL_EVERY_S;
    const restRate = Math.max(0, pods - SIDECARS * CREW_PODS) / CALL_EVERY_S;
    const tickMs = 20;
    let carry = 0;
    let stateCarry = 0;
    this.timer = setInterval(() => {
      carry += ((crewRate + restRate) * tickMs) / 1000;
      // Provider states: a heartbeat per provider every 60 s, and a change on 1 call in 10.
      stateCarry += ((PROVIDERS / 60 + (crewRate + restRate) / 10) * tickMs) / 1000;
      for (; carry >= 1; carry--) {
        const crew = Math.random() * (crewRate + restRate) < crewRate;
        const p = crew
          ? Math.floor(Math.random() * watched)
          : watched + Math.floor(Math.random() * (PROVIDERS - watched));
        this.call(p);
      }
      for (; stateCarry >= 1; stateCarry--) {
        const p = Math.floor(Math.random() * PROVIDERS);
        void this.state.providerWriter.publish(
          providerState(providerName(p), {
            totalVramMiB: 81920,
            availableModelFootprintsMiB: { [modelOf(p)]: 4000 },
          }),
        );
        this.writes++;
      }
    }, tickMs);
  }

  private call(p: number): void {
    const provider = providerName(p);
    const agent = `crew-${p % 7}/pod-${this.seq % 97}`;
    const holder = agentHolderId(agent, 1);
    const keys = keyLayout("scoped", holder);
    const ticketId = `00000000-0000-4000-8000-${String(++this.seq).padStart(12, "0")}`;
    const key = keys.ticket({ provider, ticketId });
    this.writes += 3;
    void this.tickets
      .put(key, ticketValue(provider, ticketId, modelOf(p), holder))
      .then(() => this.tickets.delete(key))
      .catch(() => undefined);
    void this.demand
      .put(
        keys.use(modelOf(p), agent),
        enc.encode(
          JSON.stringify({
            kind: "use",
            model: modelOf(p),
            rate: 1,
            updatedAt: Date.now(),
            lastUsedAt: Date.now(),
            expiresAt: Date.now() + 3_600_000,
          }),
        ),
      )
      .catch(() => undefined);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
