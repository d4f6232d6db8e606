// Child "sidecar" processes for the multi-process state tests and the contention benchmark:
// `node test/helpers/contention/claim-worker.mjs`, which runs on the built dist/ (npm test
// builds first). What a worker is told (WorkerConfig) and what it reports (WorkerReport).
import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { RefusalRecord } from "./overcommit-checker.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = here.includes(`${path.sep}dist${path.sep}`)
  ? path.resolve(here, "../../../..")
  : path.resolve(here, "../../..");
export const WORKER_SCRIPT = path.join(root, "test", "helpers", "contention", "claim-worker.mjs");
const DIST_INDEX = path.join(root, "dist", "src", "state", "index.js");

/** A provider the racing claimers pick from, with the models (and footprints) they claim. */
export interface RaceProvider {
  name: string;
  models: { model: string; footprint: number }[];
}

/** "race": claim, hold briefly, release, by count or until a deadline. */
export interface RaceConfig {
  id: number | string;
  servers: string | string[];
  /** Bucket replicas, when the worker's store creates them. */
  replicas?: number;
  seed: number;
  /** Concurrent claimers in the worker. */
  claimers: number;
  /** Claims per claimer, or: claim until `durationMs` has passed. */
  claimsPerClaimer?: number;
  durationMs?: number;
  /** Epoch ms at which every worker starts claiming. */
  startAt?: number;
  /** How long a granted ticket is held before its release (ms, uniform in [lo, hi]). */
  holdMs: [number, number];
  /** Longest pause after a refusal (ms); default 2. */
  refusedPauseMs?: number;
  recordRefusals?: boolean;
  recordLatency?: boolean;
  /** Record each granted ticket's use: from its grant to its release (see WorkerReport.uses). */
  recordUses?: boolean;
  providers: RaceProvider[];
  /** More openStateStore options. */
  storeOptions?: Record<string, unknown>;
  leaseMs?: number;
}

/** "hold": claim the given tickets, report them, then idle until killed. */
export interface HoldConfig {
  id: number | string;
  mode: "hold";
  servers: string | string[];
  leaseMs: number;
  claims: { provider: string; model: string; modelFootprintMiB: number }[];
}

/** What a racing worker reports. */
export interface WorkerReport {
  claims: number;
  /** Ticket ids of the granted claims. */
  granted: string[];
  /** With recordRefusals: every refusal and the view it was decided on. */
  refusals: RefusalRecord[];
  errors: string[];
  /** Claims refused because every attempt lost its compare-and-set. */
  contention: number;
  maxViewAgeMs: number;
  maxAttempts: number;
  /** Granted claims per provider. */
  wins: Record<string, number>;
  /** [epoch ms, outcome ("ok", a refusal reason or "error"), view age ms, confirmed at epoch ms]. */
  timeline: [number, string, number, number][];
  /** With recordLatency: each claim's time (ms). */
  latencies: number[];
  /**
   * With recordUses: [ticket id, provider, model, granted at, released at] per granted claim,
   * high-resolution epoch ms (performance.timeOrigin + now), comparable across processes.
   */
  uses: [string, string, string, number, number][];
  casConflicts: number;
  durationMs: number;
}

export interface Worker<R> {
  proc: ChildProcess;
  /** Resolves once the worker opened its store. */
  ready: Promise<void>;
  /** Resolves with the worker's report. */
  done: Promise<R>;
}

/** Forks one worker and sends it its configuration. */
export function startWorker<R>(config: RaceConfig | HoldConfig): Worker<R> {
  if (!existsSync(DIST_INDEX)) {
    throw new Error(
      `${DIST_INDEX} is missing: build first (npm test builds; or npx tsc -p tsconfig.build.json)`,
    );
  }
  const proc = fork(WORKER_SCRIPT, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  const done = new Promise<R>((resolve, reject) => {
    proc.on("message", (m: { type: string; report?: R; error?: string }) => {
      if (m.type === "ready") onReady();
      else if (m.type === "done") resolve(m.report as R);
      else if (m.type === "failed") reject(new Error(`worker failed: ${m.error}`));
    });
    proc.once("exit", (code, signal) => reject(new Error(`worker exited (code ${code}, signal ${signal})`)));
  });
  done.catch(() => undefined);
  proc.send({ type: "run", config });
  return { proc, ready, done };
}

/** `count` racing workers, configured by index; `ready` once all opened their stores. */
export function startRacers(
  count: number,
  config: (index: number) => RaceConfig,
): { ready: Promise<void>; done: Promise<WorkerReport[]> } {
  const workers = Array.from({ length: count }, (_, i) => startWorker<WorkerReport>(config(i)));
  return {
    ready: Promise.all(workers.map((w) => w.ready)).then(() => undefined),
    done: Promise.all(workers.map((w) => w.done)),
  };
}

/** SIGKILLs a worker and waits for it to exit. */
export async function killWorker(w: Worker<unknown>): Promise<void> {
  if (w.proc.exitCode !== null || w.proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => w.proc.once("exit", () => r()));
  w.proc.kill("SIGKILL");
  await exited;
}
