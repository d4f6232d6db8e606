// Runs the built CLI's `sidecar` as a real child process and waits until it is started (its
// shared state open, every port listening) or, when asked, only until its API and health ports
// listen (docs/deploy.md "Start-up and readiness"). Tests build dist/ first (`npm test` does);
// a missing build fails with a clear message.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import {
  DEFAULT_INJECTION_OPTIONS,
  type InjectionOptions,
  sidecarRuntimeEnv,
} from "../../src/operator/webhook/index.js";
import { repoRoot as findRepoRoot } from "../../src/repo-root.js";

/** The repository root (from test/helpers or its compiled copy under dist/, for benchmarks). */
export const repoRoot = findRepoRoot();
const bin = path.join(repoRoot, "bin", "kubemoot-scheduler.js");

export function assertBuilt(): void {
  if (!existsSync(path.join(repoRoot, "dist", "src", "cli", "main.js"))) {
    throw new Error("dist/ is missing: run `npm run build` (npm test does it) before the integration tests");
  }
}

/**
 * The runtime env the webhook injects into the sidecar container (NODE_OPTIONS,
 * MALLOC_ARENA_MAX), as a process env: run a sidecar as it is deployed.
 */
export function injectedRuntimeEnv(
  over: Partial<Pick<InjectionOptions, "nodeOptions" | "mallocArenaMax">> = {},
): Record<string, string> {
  const vars = sidecarRuntimeEnv({ ...DEFAULT_INJECTION_OPTIONS, ...over });
  return Object.fromEntries(vars.map((e) => [e.name, e.value]));
}

/**
 * The arguments of a sidecar process with embedded state serving agent team/agent, its proxy on
 * a free port; `rest` follows (providers, flags).
 */
export function memorySidecarArgs(...rest: string[]): string[] {
  return ["--state", "memory", "--agent", "team/agent", "--proxy-listen", "127.0.0.1:0", ...rest];
}

export interface SidecarProcess {
  readonly proc: ChildProcess;
  readonly apiUrl: string;
  readonly apiAddress: string;
  /** "host:port" of the health-only port; empty without --health-listen. */
  readonly healthAddress: string;
  /** "host:port" of the local proxy; empty when it is disabled (or not started yet: `until: "listening"`). */
  readonly proxyAddress: string;
  /** The exit code once the process has exited (null: killed by a signal); resolves only then. */
  readonly exited: Promise<number | null>;
  output(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const p of live) p.kill("SIGKILL");
});

export interface StartSidecarOptions {
  /**
   * "started" (default): wait for the line printed once the shared state is open and every port
   * listens; "listening": only for the line printed when the API and health ports listen.
   */
  until?: "started" | "listening";
  /** How long to wait for that line (ms); default 20 000. */
  timeoutMs?: number;
  /** Another build's `bin/kubemoot-scheduler.js` (a benchmark's baseline); default this one's. */
  bin?: string;
  /** Flags for node itself (a benchmark's `--cpu-prof`). */
  nodeArgs?: string[];
}

/** A CLI command's child process, started and waited for until its output matches a line. */
export interface CliProcess {
  readonly proc: ChildProcess;
  /** The exit code once the process has exited (null: killed by a signal); resolves only then. */
  readonly exited: Promise<number | null>;
  output(): string;
  /** SIGTERM (or `signal`); SIGKILL after 15 s; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `kubemoot-scheduler <argv>` (KUBEMOOT_LOG_LEVEL=warn, then `env`) and resolves once its
 * stdout matches `line`; rejects (and kills it) when it exits first or `timeoutMs` passes.
 */
export async function startCliProcess(
  argv: string[],
  line: RegExp,
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  o: Pick<StartSidecarOptions, "bin" | "nodeArgs"> = {},
): Promise<CliProcess & { match: RegExpExecArray }> {
  assertBuilt();
  const proc = spawn(process.execPath, [...(o.nodeArgs ?? []), o.bin ?? bin, ...argv], {
    cwd: repoRoot,
    env: { ...process.env, KUBEMOOT_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(proc);
  let out = "";
  proc.stdout!.on("data", (d) => {
    out += d;
  });
  proc.stderr!.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.once("exit", (code) => {
      live.delete(proc);
      resolve(code);
    }),
  );
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    // A process that is not ready keeps retrying: one that did not start in time is stopped.
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`${argv[0]} did not start in ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    proc.stdout!.on("data", () => {
      const m = line.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${argv[0]} exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    proc,
    match,
    exited,
    output: () => out,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill(signal);
      const t = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

export async function startSidecarProcess(
  args: string[],
  env: Record<string, string> = {},
  options: StartSidecarOptions = {},
): Promise<SidecarProcess> {
  const line = options.until === "listening" ? /API listening on ([^\s,;]+)/ : /API on ([^\s,]+)/;
  const p = await startCliProcess(
    ["sidecar", "--listen", "127.0.0.1:0", ...args],
    line,
    env,
    options.timeoutMs ?? 20_000,
    options,
  );
  const out = p.output();
  const address = p.match[1]!;
  return {
    proc: p.proc,
    apiAddress: address,
    apiUrl: `http://${address}`,
    healthAddress: /health (?:listening )?on ([^\s,;]+)/.exec(out)?.[1] ?? "",
    proxyAddress: /proxy on (\S+)/.exec(out)?.[1] ?? "",
    exited: p.exited,
    output: p.output,
    stop: p.stop,
  };
}
