// The provider publisher (the operator's half of shared state; the sidecar runs one too): probes
// each configured provider at an interval and right after any change it is told of, and
// publishes `kubemoot_provider_state`. An Ollama provider is probed with /api/ps, /api/tags and
// /api/version (and /api/show once per new model); any other engine with its own probe
// (src/engines). A DCGM exporter, when configured, gives the VRAM total of either. A provider
// goes ready=false after consecutive failures (short blips are ridden out) and comes back on the
// first good probe; one found to be another engine than declared goes ready=false at once (see
// engineMismatches()).
//
// It writes on change plus a slow heartbeat (docs/rules/binding.md §8 "Provider publisher",
// docs/rules/state.md §2.1): every sidecar watches the bucket, so a probe whose value equals the
// last one written in every field but lastProbedAt (./same-state.ts) is not written, unless the
// last write is `heartbeatMs` old or a reader holds a mark only a newer probe time settles
// (`publishNeeded`, ./reader-marks.ts: a suspect mark, docs/rules/state.md §2.2).
import { type Engine, PROVIDER_STALE_MS, type ProviderState } from "../core/index.js";
import {
  EngineHttp,
  type EngineMismatchError,
  EngineProber,
  isEngineMismatch,
  mismatchOr,
  OllamaClient,
  readDcgmFramebuffer,
} from "../engines/index.js";
import { invalidArgument } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import { toEngineProviderState, unreadyEngineState } from "./engine-state.js";
import { DEFAULT_FAILURE_THRESHOLD, ProbeFailureTracker } from "./failure-tracker.js";
import { type ProviderProbeConfig, toProviderState, unreadyProviderState } from "./provider-state.js";
import { sameButProbeTime } from "./same-state.js";
import { SingleSlotModels } from "./single-slot-models.js";

export interface PublishedProvider extends ProviderProbeConfig {
  /** A DCGM exporter's metrics URL; its framebuffer total wins over `totalVramMiB`. */
  dcgmUrl?: string | undefined;
  /** The engine serving it (ModelProvider spec.engine); absent = ollama. */
  engine?: Engine | undefined;
}

/** A provider that answers as another engine than the one it was declared as. */
export interface EngineMismatch {
  declared: Engine;
  detected: Engine;
  message: string;
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
  /**
   * Heartbeat (ms): a probe that changes nothing but lastProbedAt is written only once this
   * long has passed since the provider's last write; default 60 000 (DEFAULT_HEARTBEAT_MS).
   * 0 writes every probe. At most half of PROVIDER_STALE_MS (150 000): an unchanged state is
   * rewritten within heartbeatMs plus one probe interval, well before readers drop it as stale.
   */
  heartbeatMs?: number;
  /**
   * Whether a probe that changed nothing but lastProbedAt must still be written because a
   * reader holds something only a newer probe time settles: a suspect mark newer than the last
   * published probe (planners skip the provider until then), a residency overlay of a model the
   * state does not list, a fixed engine's ticket claimed after the probe (./reader-marks.ts).
   * Asked with the last published state, only when the heartbeat is not due; true, or a
   * failure, writes the probe. The operator passes
   * publishNeededFrom(() => state.tickets.everything()). Absent: never.
   */
  publishNeeded?: (last: ProviderState) => boolean | Promise<boolean>;
  /** Epoch ms; default Date.now. */
  now?: () => number;
  logger?: Logger;
  /** Called after every publish (tests, the operator's status writer). */
  onPublish?: (state: ProviderState) => void;
  /**
   * Called when a provider's latest probe starts or stops failing, before the failures reach
   * the threshold that publishes it not ready (the discussion binder moves threads off it at
   * once; docs/rules/binding.md §9). See failingProviders().
   */
  onFailingChange?: () => void;
}

interface Entry {
  config: PublishedProvider;
  /** Ollama providers. */
  client: OllamaClient | undefined;
  /** Ollama providers: which models run with one slot. */
  singleSlot: SingleSlotModels;
  /** Every other engine. */
  prober: EngineProber | undefined;
  mismatch: EngineMismatchError | undefined;
  tracker: ProbeFailureTracker;
  last: ProviderState | undefined;
  /** When `last` was written (this.now()). */
  writtenAt: number;
  timer: NodeJS.Timeout | undefined;
  running: Promise<void> | undefined;
  again: boolean;
}

/** How often an unchanged provider state is rewritten anyway (ms). */
const DEFAULT_HEARTBEAT_MS = 60_000;

export class ProviderPublisher {
  private readonly entries = new Map<string, Entry>();
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly threshold: number;
  private readonly heartbeatMs: number;
  private readonly now: () => number;
  private started = false;
  /** Since construction: states written, and probes not written because nothing changed. */
  readonly stats = { written: 0, skipped: 0 };

  constructor(private readonly o: PublisherOptions) {
    this.intervalMs = o.intervalMs ?? 10_000;
    this.timeoutMs = o.probeTimeoutMs ?? 5_000;
    this.threshold = o.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
    this.heartbeatMs = o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    if (!(this.heartbeatMs >= 0 && this.heartbeatMs <= PROVIDER_STALE_MS / 2)) {
      throw invalidArgument(
        "heartbeatMs",
        `${this.heartbeatMs}: must be 0..${PROVIDER_STALE_MS / 2} ms (half the providers' staleness bound)`,
      );
    }
    this.now = o.now ?? Date.now;
  }

  /** The last published state of every provider. */
  states(): ProviderState[] {
    return [...this.entries.values()].flatMap((e) => (e.last ? [e.last] : []));
  }

  /** Providers found to be another engine than declared, by name (empty when none is). */
  engineMismatches(): Map<string, EngineMismatch> {
    const out = new Map<string, EngineMismatch>();
    for (const [name, e] of this.entries) {
      const m = e.mismatch;
      if (m) out.set(name, { declared: m.declared, detected: m.detected, message: m.message });
    }
    return out;
  }

  /** Replaces the provider list: new ones are probed now, removed ones are unpublished. */
  async setProviders(list: readonly PublishedProvider[]): Promise<void> {
    const wanted = new Map(list.map((p) => [p.name, p]));
    // A mismatch found stands across a change of other settings (same endpoint, same declared
    // engine): a new entry would otherwise read as "answers as declared" before its first probe.
    const carried = new Map<string, EngineMismatchError>();
    for (const [name, e] of this.entries) {
      const next = wanted.get(name);
      if (next && sameConfig(next, e.config)) continue;
      if (next && e.mismatch && next.endpoint === e.config.endpoint && next.engine === e.config.engine) {
        carried.set(name, e.mismatch);
      }
      this.drop(e);
      this.entries.delete(name);
      if (!next) await this.o.sink.remove(name).catch((err) => this.warn(name, "unpublish failed", err));
    }
    for (const p of list) {
      if (this.entries.has(p.name)) continue;
      const fixed = p.engine !== undefined && p.engine !== "ollama" ? p.engine : undefined;
      const e: Entry = {
        config: p,
        client: fixed ? undefined : new OllamaClient({ baseUrl: p.endpoint, timeoutMs: this.timeoutMs }),
        singleSlot: new SingleSlotModels(),
        prober: fixed
          ? new EngineProber(fixed, { baseUrl: p.endpoint, timeoutMs: this.timeoutMs })
          : undefined,
        mismatch: carried.get(p.name),
        tracker: new ProbeFailureTracker(this.threshold),
        last: undefined,
        writtenAt: 0,
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
    await Promise.all([...this.entries.values()].map((e) => closeEntry(e)));
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

  /** Providers whose latest probe failed (one failure or more in a row). */
  failingProviders(): Set<string> {
    const out = new Set<string>();
    for (const [name, e] of this.entries) if (e.tracker.consecutiveFailures > 0) out.add(name);
    return out;
  }

  private async probe(e: Entry): Promise<void> {
    const wasFailing = e.tracker.consecutiveFailures > 0;
    try {
      await this.probeOnce(e);
    } finally {
      if (wasFailing !== e.tracker.consecutiveFailures > 0) this.o.onFailingChange?.();
    }
  }

  private async probeOnce(e: Entry): Promise<void> {
    const name = e.config.name;
    try {
      const state = e.prober ? await this.probeEngine(e, e.prober) : await this.probeOllama(e, e.client!);
      const verdict = e.tracker.success();
      if (verdict.recovered) this.o.logger?.info({ provider: name }, "provider recovered");
      if (e.mismatch)
        this.o.logger?.info({ provider: name }, "provider answers as its declared engine again");
      e.mismatch = undefined;
      await this.offer(e, state);
    } catch (err) {
      const verdict = e.tracker.failure(err instanceof Error ? err.message : String(err));
      if (isEngineMismatch(err)) {
        // Not a blip: the declaration is wrong. Placing calls there would fail or mistranslate.
        if (!e.mismatch) this.warn(name, "provider is another engine than declared", err);
        e.mismatch = err;
      } else {
        // A probe that failed otherwise (no answer, a timeout, detection itself failing) says
        // nothing of the engine: a mismatch found before stands until a probe succeeds as the
        // declared engine, so the status never reads "answers as declared" after a failure.
        if (verdict.becameUnready) {
          this.warn(name, `provider not ready after ${verdict.consecutiveFailures} failed probes`, err);
        }
        if (verdict.ready) return;
      }
      const at = this.now();
      await this.offer(
        e,
        e.prober
          ? unreadyEngineState(e.config, e.prober.engine, e.last, at)
          : unreadyProviderState(e.config, e.last, at),
      );
    }
  }

  private dcgm(e: Entry): Promise<{ totalMiB: number } | undefined> {
    if (!e.config.dcgmUrl) return Promise.resolve(undefined);
    return readDcgmFramebuffer(e.config.dcgmUrl, { timeoutMs: this.timeoutMs }).then((d) => ({
      totalMiB: d.totalMiB,
    }));
  }

  private async probeEngine(e: Entry, prober: EngineProber): Promise<ProviderState> {
    const [probe, dcgm] = await Promise.all([prober.probe(), this.dcgm(e)]);
    return toEngineProviderState(e.config, probe, dcgm, this.now());
  }

  private async probeOllama(e: Entry, client: OllamaClient): Promise<ProviderState> {
    try {
      const [ps, tags, version, dcgm] = await Promise.all([
        client.ps(),
        client.tags(),
        client.version(),
        this.dcgm(e),
      ]);
      const singleSlot = await e.singleSlot.refresh(client, [...ps, ...tags], this.timeoutMs);
      return toProviderState(e.config, { ps, tags, version, dcgm, singleSlot }, this.now());
    } catch (err) {
      // An answer Ollama would not give (a 404 on /api/ps): maybe another engine is there.
      const http = new EngineHttp({ baseUrl: e.config.endpoint, timeoutMs: this.timeoutMs });
      try {
        throw await mismatchOr(http, "ollama", err);
      } finally {
        await http.close();
      }
    }
  }

  /** Writes a probe's state unless it changes nothing a reader needs (see the file comment). */
  private async offer(e: Entry, state: ProviderState): Promise<void> {
    if (await this.unchanged(e, state)) {
      this.stats.skipped++;
      return;
    }
    await this.publish(e, state);
  }

  private async unchanged(e: Entry, state: ProviderState): Promise<boolean> {
    const last = e.last;
    if (last === undefined || this.heartbeatMs === 0) return false;
    const age = this.now() - e.writtenAt;
    // A clock that went back counts as due: never hold a write back on a time not yet reached.
    if (age < 0 || age >= this.heartbeatMs) return false;
    if (!sameButProbeTime(state, last)) return false;
    if (this.o.publishNeeded === undefined) return true;
    try {
      return !(await this.o.publishNeeded(last));
    } catch {
      // Not knowing what readers hold: write, as before there was any skipping.
      return false;
    }
  }

  private async publish(e: Entry, state: ProviderState): Promise<void> {
    try {
      await this.o.sink.publish(state);
      e.last = state;
      e.writtenAt = this.now();
      this.stats.written++;
      this.o.onPublish?.(state);
    } catch (err) {
      this.warn(e.config.name, "publish failed", err);
    }
  }

  private drop(e: Entry): void {
    if (e.timer) clearTimeout(e.timer);
    void closeEntry(e);
  }

  private warn(provider: string, msg: string, err: unknown): void {
    this.o.logger?.warn({ provider, err: err instanceof Error ? err.message : String(err) }, msg);
  }
}

function closeEntry(e: Entry): Promise<void> {
  return e.prober ? e.prober.close() : (e.client?.close() ?? Promise.resolve());
}

function sameConfig(a: PublishedProvider, b: PublishedProvider): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
