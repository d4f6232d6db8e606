// An informer (list + watch, with a local cache) that survives watch errors.
//
// client-node's ListWatch (makeInformer) re-opens a watch the server closed cleanly, from the
// last resourceVersion, and relists after 410 Gone; but on an error (connection refused, reset
// stream, HTTP 5xx/403) it reports the error and stops for good. This wrapper restarts it
// after an exponential backoff (from ListWatch's last resourceVersion: no relist unless the
// server says 410), and resets the backoff once a watch has stayed healthy for `stableMs`.
import {
  ADD,
  DELETE,
  ERROR,
  type Informer,
  type KubeConfig,
  makeInformer,
  type ObjectCache,
  UPDATE,
} from "@kubernetes/client-node";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import { Backoff, type BackoffOptions } from "./backoff.js";
import { errorMessage, type KubeList, type KubeObject } from "./client.js";

export type InformerEvent = "add" | "update" | "delete";

export interface InformerOptions {
  kubeConfig: KubeConfig;
  /** For logs, e.g. `agents` or `deployments in crew-a`. */
  name: string;
  /** The collection path (see resources.collectionPath). */
  path: string;
  list: () => Promise<KubeList>;
  onEvent: (event: InformerEvent, obj: KubeObject) => void;
  backoff?: BackoffOptions;
  /** A watch healthy this long resets the backoff; default 30 s. */
  stableMs?: number;
  logger?: Logger;
  now?: () => number;
}

export class ResilientInformer {
  readonly name: string;
  private readonly inner: Informer<KubeObject> & ObjectCache<KubeObject>;
  private readonly backoff: Backoff;
  private readonly stableMs: number;
  private readonly log: Logger;
  private readonly now: () => number;
  private stopped = false;
  private synced = false;
  private errorDuringAttempt = false;
  private healthySince: number | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private syncWaiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private restartCount = 0;

  constructor(o: InformerOptions) {
    this.name = o.name;
    this.backoff = new Backoff(o.backoff);
    this.stableMs = o.stableMs ?? 30_000;
    this.log = o.logger ?? silentLogger;
    this.now = o.now ?? Date.now;
    this.inner = makeInformer<KubeObject>(o.kubeConfig, o.path, o.list);
    this.inner.on(ADD, (obj) => o.onEvent("add", obj));
    this.inner.on(UPDATE, (obj) => o.onEvent("update", obj));
    this.inner.on(DELETE, (obj) => o.onEvent("delete", obj));
    this.inner.on(ERROR, (err) => this.onError(err));
  }

  /** Lists and starts watching; resolves once the first list succeeded (retrying until then). */
  start(): Promise<void> {
    const p = new Promise<void>((resolve, reject) => this.syncWaiters.push({ resolve, reject }));
    void this.attempt();
    return p;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters)
      w.reject(
        new KubemootError(ErrorCode.ShuttingDown, `informer ${this.name} stopped before its first list`),
      );
    await this.inner.stop();
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Restarts after errors so far. */
  get restarts(): number {
    return this.restartCount;
  }

  list(): readonly KubeObject[] {
    return this.inner.list();
  }

  get(name: string, namespace?: string): KubeObject | undefined {
    return this.inner.get(name, namespace);
  }

  private async attempt(): Promise<void> {
    if (this.stopped) return;
    this.errorDuringAttempt = false;
    try {
      await this.inner.start();
    } catch (err) {
      this.onError(err);
    }
    if (this.stopped || this.errorDuringAttempt) return;
    this.healthySince = this.now();
    if (!this.synced) {
      this.synced = true;
      this.log.debug({ informer: this.name }, "informer synced");
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w.resolve();
    }
  }

  private onError(err: unknown): void {
    if (this.stopped) return; // the abort of stop() surfaces as an error; not a failure
    this.errorDuringAttempt = true;
    if (this.healthySince !== undefined && this.now() - this.healthySince >= this.stableMs)
      this.backoff.reset();
    this.healthySince = undefined;
    if (this.restartTimer) return; // one restart pending is enough
    const delay = this.backoff.next();
    this.log.warn(
      { informer: this.name, err: errorMessage(err), attempt: this.backoff.attempts, retryInMs: delay },
      "watch failed; restarting after backoff",
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restartCount += 1;
      void this.attempt();
    }, delay);
  }
}
