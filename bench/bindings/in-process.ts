// The binder's own share of a rebind in `bench bindings` (docs/benchmarks.md "bindings"): the
// pure bindDiscussions over the same manifests and threads, in this process, timed apart from
// probes, NATS and the operator's loop: a first binding of every thread, then a rebind with each
// thread's current binding as its incumbent and the busiest provider not ready (what the
// operator's binder computes after a provider's first failed probe). Also tells how the threads
// spread over the providers.
import { performance } from "node:perf_hooks";
import { bindDiscussions, type DiscussionResult, type DiscussionThread } from "../../src/binding/index.js";
import { loadManifests, toSnapshot } from "../../src/operator/index.js";
import { percentile } from "../lib/report.js";

export interface InProcessBind {
  /** Median and max wall ms of one bindDiscussions over every thread (first binding). */
  first_bind_ms_p50: number;
  first_bind_ms_max: number;
  /** The same with incumbents and the busiest provider not ready. */
  rebind_ms_p50: number;
  rebind_ms_max: number;
  /** Providers holding at least one (thread, phase) in the first binding. */
  providers_used: number;
  /** The most (thread, phase) bindings on one provider. */
  busiest_provider_keys: number;
}

const r2 = (x: number) => Math.round(x * 100) / 100;

export async function timeInProcessBind(
  manifestsDir: string,
  threads: readonly { threadId: string; agent: string }[],
  repeats = 5,
): Promise<InProcessBind> {
  const snapshot = toSnapshot(await loadManifests([manifestsDir]));
  const first: number[] = [];
  let results: DiscussionResult[] = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    results = bindDiscussions(snapshot, threads, { now: new Date() });
    first.push(performance.now() - t);
  }
  const perProvider = new Map<string, number>();
  for (const r of results) {
    const p = r.binding?.provider;
    if (p) perProvider.set(p, (perProvider.get(p) ?? 0) + 1);
  }
  const busiest = [...perProvider].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
  const current = new Map<string, NonNullable<DiscussionThread["current"]>>();
  for (const r of results) {
    if (!r.binding) continue;
    const c = current.get(r.threadId) ?? {};
    c[r.phase] = {
      model: r.binding.model,
      provider: r.binding.provider,
      endpoint: r.binding.endpoint,
      modelRef: r.binding.modelRef,
    };
    current.set(r.threadId, c);
  }
  const down = {
    ...snapshot,
    providers: snapshot.providers.map((p) =>
      p.name === busiest?.[0] ? { ...p, status: { ...p.status, ready: false } } : p,
    ),
  };
  const withCurrent = threads.map((t) => {
    const c = current.get(t.threadId);
    return c ? { ...t, current: c } : t;
  });
  const again: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    bindDiscussions(down, withCurrent, { now: new Date() });
    again.push(performance.now() - t);
  }
  return {
    first_bind_ms_p50: r2(percentile(first, 50)),
    first_bind_ms_max: r2(Math.max(...first)),
    rebind_ms_p50: r2(percentile(again, 50)),
    rebind_ms_max: r2(Math.max(...again)),
    providers_used: perProvider.size,
    busiest_provider_keys: busiest?.[1] ?? 0,
  };
}
