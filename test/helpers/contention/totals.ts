// The claimers' reports of one run, added up.
import type { RefusalRecord } from "./overcommit-checker.js";
import type { WorkerReport } from "./workers.js";

export interface ContentionTotals {
  claims: number;
  /** Ticket ids of all granted claims. */
  granted: string[];
  refusals: RefusalRecord[];
  errors: string[];
  casConflicts: number;
  /** Claims refused because every attempt lost its compare-and-set. */
  contention: number;
  maxViewAgeMs: number;
  /** The longest worker's running time (ms). */
  durationMs: number;
  latencies: number[];
  timeline: WorkerReport["timeline"];
  /** Granted claims per provider. */
  wins: Record<string, number>;
}

export function totals(reports: readonly WorkerReport[]): ContentionTotals {
  const wins: Record<string, number> = {};
  for (const r of reports) for (const [p, n] of Object.entries(r.wins)) wins[p] = (wins[p] ?? 0) + n;
  const sum = (f: (r: WorkerReport) => number) => reports.reduce((n, r) => n + f(r), 0);
  return {
    claims: sum((r) => r.claims),
    granted: reports.flatMap((r) => r.granted),
    refusals: reports.flatMap((r) => r.refusals),
    errors: reports.flatMap((r) => r.errors),
    casConflicts: sum((r) => r.casConflicts),
    contention: sum((r) => r.contention),
    maxViewAgeMs: Math.max(...reports.map((r) => r.maxViewAgeMs)),
    durationMs: Math.max(...reports.map((r) => r.durationMs)),
    latencies: reports.flatMap((r) => r.latencies),
    timeline: reports.flatMap((r) => r.timeline),
    wins,
  };
}
