// Leader election on a coordination.k8s.io/v1 Lease, as Kubernetes controllers do it: the
// holder renews the Lease every leaseDuration/3; a candidate takes it over only when the last
// renewal is older than leaseDuration; every write carries the resourceVersion it read, so two
// candidates can never both win (the API server answers the loser 409). A holder that cannot
// renew within the lease gives up leadership (onLost): the operator then exits and restarts as
// a candidate, so that two replicas never write at the same time.
import { CoordinationV1Api, type KubeConfig, type V1Lease } from "@kubernetes/client-node";
import { type Logger, silentLogger } from "../../log/index.js";
import { errorMessage, httpStatus } from "./client.js";

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The Lease's name. */
  name: string;
  /** This candidate (the pod's name). */
  identity: string;
  /** How long a renewal holds the lease (s); default 15. */
  leaseDurationS?: number;
  /** Candidates retry this often (ms); default leaseDuration/5. */
  retryMs?: number;
  logger?: Logger;
  /** Wall clock (tests); default Date.now. */
  now?: () => number;
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly o: LeaderElectionOptions;
  private readonly log: Logger;
  private readonly durationMs: number;
  private readonly now: () => number;
  private renewTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private leading = false;
  private lastRenewMs = 0;
  private lost: (() => void) | undefined;

  constructor(o: LeaderElectionOptions) {
    this.o = o;
    this.api = o.kubeConfig.makeApiClient(CoordinationV1Api);
    this.log = o.logger ?? silentLogger;
    this.durationMs = (o.leaseDurationS ?? 15) * 1000;
    this.now = o.now ?? Date.now;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Resolves once this candidate holds the lease (false if stopped first); then renews it in
   * the background and calls `onLost` if it cannot.
   */
  async acquire(onLost: () => void): Promise<boolean> {
    this.lost = onLost;
    const retry = this.o.retryMs ?? Math.max(100, this.durationMs / 5);
    while (!this.stopped) {
      if (await this.tryAcquireOrRenew()) {
        this.leading = true;
        this.log.info(
          { lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity },
          "leader: acquired",
        );
        this.scheduleRenew();
        return true;
      }
      await new Promise((r) => setTimeout(r, retry).unref());
    }
    return false;
  }

  /** Stops renewing; a leader releases the lease so that a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.renewTimer) clearTimeout(this.renewTimer);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.read();
      if (lease?.spec?.holderIdentity === this.o.identity) {
        const { namespace, name } = this.o;
        await this.api.replaceNamespacedLease({
          namespace,
          name,
          body: { ...lease, spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1 } },
        });
      }
    } catch (err) {
      this.log.warn({ err: errorMessage(err) }, "leader: release failed (the lease expires by itself)");
    }
  }

  private scheduleRenew(): void {
    if (this.stopped) return;
    this.renewTimer = setTimeout(async () => {
      const ok = await this.tryAcquireOrRenew();
      if (ok) this.lastRenewMs = this.now();
      if (!ok && this.now() - this.lastRenewMs >= this.durationMs) {
        this.leading = false;
        this.log.error({ lease: `${this.o.namespace}/${this.o.name}` }, "leader: lost the lease");
        this.lost?.();
        return;
      }
      this.scheduleRenew();
    }, this.durationMs / 3);
    this.renewTimer.unref();
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease({ namespace: this.o.namespace, name: this.o.name });
    } catch (err) {
      if (httpStatus(err) === 404) return undefined;
      throw err;
    }
  }

  /** One attempt: create, renew ours, or take over an expired one. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.o;
    const nowMs = this.now();
    const stamp = new Date(nowMs);
    const durationS = Math.ceil(this.durationMs / 1000);
    try {
      const lease = await this.read();
      if (!lease) {
        await this.api.createNamespacedLease({
          namespace,
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationS,
              acquireTime: stamp,
              renewTime: stamp,
              leaseTransitions: 0,
            },
          },
        });
        this.lastRenewMs = nowMs;
        return true;
      }
      const spec = lease.spec ?? {};
      const holder = spec.holderIdentity ?? "";
      const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
      const held =
        holder !== "" &&
        holder !== identity &&
        renewed + (spec.leaseDurationSeconds ?? durationS) * 1000 > nowMs;
      if (held) return false;
      const takeover = holder !== identity;
      await this.api.replaceNamespacedLease({
        namespace,
        name,
        body: {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds: durationS,
            renewTime: stamp,
            ...(takeover ? { acquireTime: stamp, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
          },
        },
      });
      this.lastRenewMs = nowMs;
      return true;
    } catch (err) {
      // 409: someone else wrote first; anything else: the API server is unreachable. Both: not now.
      if (httpStatus(err) !== 409) this.log.warn({ err: errorMessage(err) }, "leader: lease update failed");
      return false;
    }
  }
}
