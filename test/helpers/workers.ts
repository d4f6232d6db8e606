// Child "sidecar" processes for the multi-process state tests and the contention benchmark:
// `node test/state/claim-worker.mjs`, which runs on the built dist/ (npm test builds first).
import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = here.includes(`${path.sep}dist${path.sep}`)
  ? path.resolve(here, "../../..")
  : path.resolve(here, "../..");
export const WORKER_SCRIPT = path.join(root, "test", "state", "claim-worker.mjs");
const DIST_INDEX = path.join(root, "dist", "src", "state", "index.js");

export interface Worker<R> {
  proc: ChildProcess;
  /** Resolves once the worker opened its store. */
  ready: Promise<void>;
  /** Resolves with the worker's report. */
  done: Promise<R>;
}

/** Forks one worker and sends it its configuration. */
export function startWorker<R>(config: Record<string, unknown>): Worker<R> {
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

/** SIGKILLs a worker and waits for it to exit. */
export async function killWorker(w: Worker<unknown>): Promise<void> {
  if (w.proc.exitCode !== null || w.proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => w.proc.once("exit", () => r()));
  w.proc.kill("SIGKILL");
  await exited;
}
