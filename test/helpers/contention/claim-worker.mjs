// A "sidecar" for the multi-process state tests and the contention benchmark: opens the shared
// state on NATS and runs concurrent claimers against it. Plain .mjs on the built dist/ (no
// TypeScript loader is installed), driven over the IPC channel of child_process.fork:
//   parent → {type:"run", config}   worker → {type:"ready"} ... {type:"done", report}
// Modes: "race" (claim, hold briefly, release; by count or until a deadline) and "hold"
// (claim the given tickets, report them, then idle until killed). workers.ts types the
// configurations (RaceConfig, HoldConfig) and the report (WorkerReport).
import { performance } from "node:perf_hooks";
import { mulberry32 } from "../../../dist/src/prng/index.js";
import { openStateStore } from "../../../dist/src/state/index.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function race(store, config) {
  const random = mulberry32(config.seed);
  const report = {
    claims: 0,
    granted: [],
    refusals: [],
    errors: [],
    contention: 0,
    maxViewAgeMs: 0,
    maxAttempts: 0,
    wins: {},
    timeline: [],
    latencies: [],
    uses: [],
    casConflicts: 0,
    durationMs: 0,
  };
  const picks = [];
  for (const p of config.providers) for (const m of p.models) picks.push({ provider: p.name, ...m });
  const deadline = config.durationMs ? Date.now() + config.durationMs : Number.POSITIVE_INFINITY;
  const t0 = performance.now();
  const claimer = async () => {
    for (let i = 0; config.durationMs ? Date.now() < deadline : i < config.claimsPerClaimer; i++) {
      const pick = picks[Math.floor(random() * picks.length)];
      try {
        const started = performance.now();
        const r = await store.tickets.claim({
          provider: pick.provider,
          model: pick.model,
          modelFootprintMiB: pick.footprint,
          ...(config.leaseMs ? { leaseMs: config.leaseMs } : {}),
        });
        report.claims++;
        if (config.recordLatency) report.latencies.push(performance.now() - started);
        report.maxAttempts = Math.max(report.maxAttempts, r.stats.attempts);
        if (r.stats.viewAgeMs > report.maxViewAgeMs) report.maxViewAgeMs = r.stats.viewAgeMs;
        const at = Date.now();
        if (r.ok) {
          report.granted.push(r.ticket.ticketId);
          report.wins[pick.provider] = (report.wins[pick.provider] ?? 0) + 1;
          report.timeline.push([at, "ok", r.stats.viewAgeMs, r.stats.confirmedAt + performance.timeOrigin]);
          const grantedAt = performance.timeOrigin + performance.now();
          const [lo, hi] = config.holdMs;
          await sleep(lo + random() * (hi - lo));
          if (config.recordUses) {
            const releasedAt = performance.timeOrigin + performance.now();
            report.uses.push([r.ticket.ticketId, pick.provider, pick.model, grantedAt, releasedAt]);
          }
          await store.tickets
            .release(r.ticket)
            .catch((err) => report.errors.push(`release: ${err.code ?? err}`));
        } else {
          if (r.reason === "contention") report.contention++;
          report.timeline.push([
            at,
            r.reason,
            r.stats.viewAgeMs,
            r.stats.confirmedAt + performance.timeOrigin,
          ]);
          if (config.recordRefusals) {
            report.refusals.push({
              reason: r.reason,
              provider: pick.provider,
              model: pick.model,
              footprint: pick.footprint,
              revision: r.stats.revision,
              counted: (r.counted ?? []).map((t) => [t.ticketId, t.modelName, t.modelFootprintMiB]),
            });
          }
          // A refused caller would wait for a capacity change; here: a short pause.
          await sleep(random() * (config.refusedPauseMs ?? 2));
        }
      } catch (err) {
        report.errors.push(String(err?.code ?? err));
        report.timeline.push([Date.now(), "error", 0, 0]);
        await sleep(50);
      }
    }
  };
  await Promise.all(Array.from({ length: config.claimers }, claimer));
  report.durationMs = performance.now() - t0;
  report.casConflicts = store.stats.casConflicts;
  return report;
}

async function hold(store, config) {
  const held = [];
  for (const c of config.claims) {
    const r = await store.tickets.claim({ ...c, leaseMs: config.leaseMs });
    if (r.ok) held.push(r.ticket);
  }
  return { held };
}

process.on("message", async (msg) => {
  if (msg?.type !== "run") return;
  const config = msg.config;
  let store;
  try {
    store = await openStateStore(config.servers, {
      holderId: `worker-${config.id}`,
      replicas: config.replicas ?? 1,
      ...(config.storeOptions ?? {}),
      nats: { reconnectWaitMs: 100, name: `worker-${config.id}` },
    });
    process.send({ type: "ready" });
    if (config.mode === "hold") {
      process.send({ type: "done", report: await hold(store, config) });
      setInterval(() => undefined, 1 << 30); // idle until killed
      return;
    }
    if (config.startAt) await sleep(Math.max(0, config.startAt - Date.now()));
    const report = await race(store, config);
    await store.close();
    process.send({ type: "done", report }, () => process.exit(0));
  } catch (err) {
    process.send({ type: "failed", error: String(err?.stack ?? err) }, () => process.exit(1));
  }
});
