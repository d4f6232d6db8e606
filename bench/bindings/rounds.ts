// One round of `bench bindings` (docs/benchmarks.md "bindings"): once the bindings bucket is
// quiet, the provider holding the most (thread, phase) bindings is killed (its emulator closed at
// t0: connection refused from then on); each of its keys' latency is the time until the
// observer sees a new value for it on another provider (or unschedulable), minus t0. Then the
// round waits until the provider's published state says not ready (three failed probes),
// starts a new emulator on the same port with the same models, and waits until the state says
// ready again and the bucket is quiet; whether threads moved back is counted, not measured.
import type { EmulatorHandle } from "../../src/emulator/index.js";
import { percentile } from "../lib/report.js";
import { type ProviderSpec, startCard } from "./fleet.js";
import { type BucketObserver, type SeenProviderState, until } from "./observer.js";
import { decidedAfter } from "./operator-log.js";

export interface RoundContext {
  observer: BucketObserver;
  specs: readonly ProviderSpec[];
  /** The running emulators, by provider index; a round replaces the one it restarts. */
  cards: EmulatorHandle[];
  /** The bucket is quiet after this long without a binding value (ms). */
  quietMs: number;
  /** Longest wait for any one step (ms); keys not rebound by then are counted missing. */
  timeoutMs: number;
  /** The operator's CPU time so far (ms), when it can be read. */
  operatorCpuMs(): number | undefined;
  /** The operator's output so far (its info log holds the binder's decisions). */
  operatorOutput(): string;
}

export interface RoundResult {
  round: number;
  provider: string;
  /** (thread, phase) keys bound to the provider at t0. */
  keys: number;
  /** Keys not rebound within the timeout (not in the latencies). */
  missing: number;
  first_s: number | null;
  p50_s: number | null;
  p99_s: number | null;
  max_s: number | null;
  /** From t0 until the binder logged its decision (detection and the bind): earliest, latest. */
  decided_min_s: number | null;
  decided_max_s: number | null;
  /** Keys whose decision was found in the operator's log. */
  decided_keys: number;
  /** Per key, arrival minus decision (the KV write and the watch delivery): median, max. */
  delivery_p50_s: number | null;
  delivery_max_s: number | null;
  /** Other keys whose value changed between t0 and the restart. */
  other_keys_changed: number;
  /** From t0 until the provider's published state said ready false. */
  not_ready_published_s: number | null;
  /** From the restart until the published state said ready true again. */
  recovered_s: number | null;
  /** Keys of the round back on the provider once the bucket is quiet again. */
  moved_back: number;
  /** Keys changed (any) between the restart and the quiet bucket. */
  changed_after_recovery: number;
  /** The operator's CPU time over the round, t0 until quiet after the recovery. */
  operator_cpu_ms: number | null;
  /** The round's wall time, t0 until quiet after the recovery. */
  wall_s: number;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const orNull = (x: number) => (Number.isFinite(x) ? r3(x) : null);

/** Waits until no binding value has arrived for `quietMs`. */
export function quiet(o: BucketObserver, quietMs: number, timeoutMs: number): Promise<void> {
  return until(() => performance.now() - o.lastBindingAt >= quietMs, timeoutMs + quietMs, "a quiet bucket");
}

/** The provider with the most (thread, phase) bindings (ties: the first by name) and its keys. */
export function busiestProvider(o: BucketObserver): { provider: string; keys: string[] } | undefined {
  const byProvider = new Map<string, string[]>();
  for (const [key, b] of o.bindings) {
    if (b.kind !== "binding" || b.provider === undefined) continue;
    const keys = byProvider.get(b.provider) ?? [];
    keys.push(key);
    byProvider.set(b.provider, keys);
  }
  const best = [...byProvider].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))[0];
  return best ? { provider: best[0], keys: best[1] } : undefined;
}

/** Starts the provider's emulator again on its port, retrying while the port is not free yet. */
async function restartCard(spec: ProviderSpec, port: number): Promise<EmulatorHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCard(spec, port);
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export interface RoundMeasures {
  result: RoundResult;
  /** Each rebound key's latency (s). */
  latenciesS: number[];
  /** Each rebound key's arrival minus the binder's decision (s), where the log had it. */
  deliveriesS: number[];
}

export async function runRound(ctx: RoundContext, round: number): Promise<RoundMeasures> {
  const { observer: o, timeoutMs } = ctx;
  await quiet(o, ctx.quietMs, timeoutMs);
  const busiest = busiestProvider(o);
  if (!busiest) throw new Error("no provider holds a binding");
  const { provider } = busiest;
  const index = ctx.specs.findIndex((s) => s.name === provider);
  const spec = ctx.specs[index];
  if (!spec) throw new Error(`bound to ${provider}, which is not in the fleet`);
  const affected = new Set(busiest.keys);
  const arrivals = new Map<string, number>();
  const others = new Set<string>();
  const afterRecovery = new Set<string>();
  let t0 = Number.POSITIVE_INFINITY;
  let restartedAt = Number.POSITIVE_INFINITY;
  const offBindings = o.onBindingChange((key, v) => {
    const at = v?.at ?? performance.now();
    if (at < t0) return;
    if (at >= restartedAt) afterRecovery.add(key);
    else if (!affected.has(key)) others.add(key);
    else if (v !== undefined && !arrivals.has(key) && (v.kind !== "binding" || v.provider !== provider)) {
      arrivals.set(key, (at - t0) / 1000);
    }
  });
  // The provider's state as it arrives (the latest alone could be overtaken between checks).
  const states: SeenProviderState[] = [];
  const offStates = o.onProviderChange((key, v) => {
    if (key === provider && v !== undefined) states.push(v);
  });
  const stateAfter = async (since: number, ready: boolean): Promise<number> => {
    let found: SeenProviderState | undefined;
    await until(
      () => {
        found = states.find((s) => s.at >= since && s.ready === ready);
        return found !== undefined;
      },
      timeoutMs,
      `${provider}'s published state ready=${ready}`,
    ).catch(() => undefined);
    return found ? (found.at - since) / 1000 : Number.NaN;
  };
  try {
    const port = ctx.cards[index]!.port;
    const cpu0 = ctx.operatorCpuMs();
    const logFrom = ctx.operatorOutput().length;
    const t0Wall = Date.now();
    t0 = performance.now();
    await ctx.cards[index]!.close();
    await until(() => arrivals.size === affected.size, timeoutMs, `${provider}'s keys rebound`).catch(
      () => undefined,
    );
    const notReady = await stateAfter(t0, false);
    restartedAt = performance.now();
    ctx.cards[index] = await restartCard(spec, port);
    const recovered = await stateAfter(restartedAt, true);
    await quiet(o, ctx.quietMs, timeoutMs);
    const cpu1 = ctx.operatorCpuMs();
    const latencies = [...arrivals.values()];
    // The operator's log is at ms resolution against this process's Date.now(): one clock.
    const decided = decidedAfter(ctx.operatorOutput().slice(logFrom), affected, provider, t0Wall);
    const decidedS = [...decided.values()];
    const deliveries = [...decided].flatMap(([k, d]) => {
      const a = arrivals.get(k);
      return a === undefined ? [] : [Math.max(0, a - d)];
    });
    const result: RoundResult = {
      round,
      provider,
      keys: affected.size,
      missing: affected.size - arrivals.size,
      first_s: orNull(Math.min(...latencies)),
      p50_s: orNull(percentile(latencies, 50)),
      p99_s: orNull(percentile(latencies, 99)),
      max_s: orNull(Math.max(...latencies)),
      decided_min_s: orNull(Math.min(...decidedS)),
      decided_max_s: orNull(Math.max(...decidedS)),
      decided_keys: decided.size,
      delivery_p50_s: orNull(percentile(deliveries, 50)),
      delivery_max_s: orNull(Math.max(...deliveries)),
      other_keys_changed: others.size,
      not_ready_published_s: orNull(notReady),
      recovered_s: orNull(recovered),
      moved_back: [...affected].filter((k) => o.bindings.get(k)?.provider === provider).length,
      changed_after_recovery: afterRecovery.size,
      operator_cpu_ms: cpu0 !== undefined && cpu1 !== undefined ? Math.round(cpu1 - cpu0) : null,
      wall_s: r3((performance.now() - t0) / 1000),
    };
    return { result, latenciesS: latencies, deliveriesS: deliveries };
  } finally {
    offBindings();
    offStates();
  }
}
