// The provider publisher (the operator's half of shared state; the sidecar runs one too): probes each configured
// provider's /api/ps, /api/tags and /api/version (and a DCGM exporter when configured) at an
// interval and right after any change it is told of, and publishes `kubemoot_provider_state`.
// A provider goes ready=false after consecutive failures (short blips are ridden out) and comes
// back on the first good probe.
import type { ProviderState } from "../core/shapes.js";
import { OllamaClient, readDcgmFramebuffer } from "../engines/index.js";
import type { Logger } from "../log/index.js";
import { DEFAULT_FAILURE_THRESHOLD, ProbeFailureTracker } from "./failure-tracker.js";
import { type ProviderProbeConfig, toProviderState, unreadyProviderState } from "./provider-state.js";

export interface PublishedProvider extends ProviderProbeConfig {
  /** A DCGM exporter's metrics URL; its framebuffer total wins over `totalVramMiB`. */
  dcgmUrl?: string | undefined;
}

/** Where states go: the state layer's ProviderStateWriter fits. */
export interface ProviderStateSink {
  publish(state: ProviderState): Promise<unknown>;
  remove(name: string): Promise<unknown>;
}

export interface PublisherOptions {
  sink: ProviderStateSink;
  /** Probe interval per provider (ms); default 10 000. */
  intervalMs?: number;
  /** Deadline of one probe's calls (ms); default 5 000. */
  probeTimeoutMs?: number;
  /** Consecutive failures before ready=false; default 3. */
  failureThreshold?: number;
  /** Epoch ms; default Date.now. */
  now?: () => number;
  logger?: Logger;
  /** Called after every publish (tests, the operator's status writer). */
  onPublish?: (state: ProviderState) => void;
}

interface Entry {
  config: PublishedProvider;
  client: OllamaClient;
  tracker: ProbeFailureTracker;
  last: ProviderState | undefined;
  timer: NodeJS.Timeout | undefined;
  running: Promise<void> | undefined;
  again: boolean;
}

export class ProviderPublisher {
  private readonly entries = new Map<string, Entry>();
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly threshold: number;
  private readonly now: () => number;
  private started = false;

  constructor(private readonly o: PublisherOptions) {
    this.intervalMs = o.intervalMs ?? 10_000;
    this.timeoutMs = o.probeTimeoutMs ?? 5_000;
    this.threshold = o.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
    this.now = o.now ?? Date.now;
  }

  /** The last published state of every provider. */
  states(): ProviderState[] {
    return [...this.entries.values()].flatMap((e) => (e.last ? [e.last] : []));
  }

  /** Replaces the provider list: new ones are probed now, removed ones are unpublished. */
  async setProviders(list: readonly PublishedProvider[]): Promise<void> {
    const wanted = new Map(list.map((p) => [p.name, p]));
    for (const [name, e] of this.entries) {
      const next = wanted.get(name);
      if (next && sameConfig(next, e.config)) continue;
      this.drop(e);
      this.entries.delete(name);
      if (!next) await this.o.sink.remove(name).catch((err) => this.warn(name, "unpublish failed", err));
    }
    for (const p of list) {
      if (this.entries.has(p.name)) continue;
      const e: Entry = {
        config: p,
        client: new OllamaClient({ baseUrl: p.endpoint, timeoutMs: this.timeoutMs }),
        tracker: new ProbeFailureTracker(this.threshold),
        last: undefined,
        timer: undefined,
        running: undefined,
        again: false,
      };
      this.entries.set(p.name, e);
      if (this.started) this.kick(e);
    }
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const e of this.entries.values()) this.kick(e);
  }

  /** Probes now (one provider, or all): call it right after a change the caller caused. */
  async probeNow(name?: string): Promise<void> {
    const targets = name
      ? [this.entries.get(name)].filter((e): e is Entry => !!e)
      : [...this.entries.values()];
    await Promise.all(targets.map((e) => this.run(e)));
  }

  async stop(): Promise<void> {
    this.started = false;
    const running = [...this.entries.values()].map((e) => e.running);
    for (const e of this.entries.values()) if (e.timer) clearTimeout(e.timer);
    await Promise.allSettled(running);
    await Promise.all([...this.entries.values()].map((e) => e.client.close()));
  }

  private kick(e: Entry): void {
    void this.run(e);
  }

  /** One probe at a time per provider; a request during a probe runs one more right after. */
  private run(e: Entry): Promise<void> {
    if (e.running) {
      e.again = true;
      return e.running;
    }
    if (e.timer) clearTimeout(e.timer);
    e.running = this.probe(e).finally(() => {
      e.running = undefined;
      if (!this.started || this.entries.get(e.config.name) !== e) return;
      if (e.again) {
        e.again = false;
        this.kick(e);
        return;
      }
      e.timer = setTimeout(() => this.kick(e), this.intervalMs);
      e.timer.unref();
    });
    return e.running;
  }

  private async probe(e: Entry): Promise<void> {
    const name = e.config.name;
    try {
      const [ps, tags, version, dcgm] = await Promise.all([
        e.client.ps(),
        e.client.tags(),
        e.client.version(),
        e.config.dcgmUrl
          ? readDcgmFramebuffer(e.config.dcgmUrl, { timeoutMs: this.timeoutMs })
          : Promise.resolve(undefined),
      ]);
      const verdict = e.tracker.success();
      if (verdict.recovered) this.o.logger?.info({ provider: name }, "provider recovered");
      const state = toProviderState(
        e.config,
        { ps, tags, version, dcgm: dcgm ? { totalMiB: dcgm.totalMiB } : undefined },
        this.now(),
      );
      await this.publish(e, state);
    } catch (err) {
      const verdict = e.tracker.failure(err instanceof Error ? err.message : String(err));
      if (verdict.becameUnready) {
        this.warn(name, `provider not ready after ${verdict.consecutiveFailures} failed probes`, err);
      }
      if (!verdict.ready) await this.publish(e, unreadyProviderState(e.config, e.last, this.now()));
    }
  }

  private async publish(e: Entry, state: ProviderState): Promise<void> {
    try {
      await this.o.sink.publish(state);
      e.last = state;
      this.o.onPublish?.(state);
    } catch (err) {
      this.warn(e.config.name, "publish failed", err);
    }
  }

  private drop(e: Entry): void {
    if (e.timer) clearTimeout(e.timer);
    void e.client.close();
  }

  private warn(provider: string, msg: string, err: unknown): void {
    this.o.logger?.warn({ provider, err: err instanceof Error ? err.message : String(err) }, msg);
  }
}

function sameConfig(a: PublishedProvider, b: PublishedProvider): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
