// Runs the built CLI's `sidecar` as a real child process and waits until its API listens.
// Tests build dist/ first (`npm test` does); a missing build fails with a clear message.
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
  /** "host:port" of the local proxy; empty when it is disabled. */
  readonly proxyAddress: string;
  output(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const p of live) p.kill("SIGKILL");
});

export async function startSidecarProcess(
  args: string[],
  env: Record<string, string> = {},
): Promise<SidecarProcess> {
  assertBuilt();
  const proc = spawn(process.execPath, [bin, "sidecar", "--listen", "127.0.0.1:0", ...args], {
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
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sidecar did not start in 20 s:\n${out}`)), 20_000);
    const onData = () => {
      const m = /API on ([^\s,]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`sidecar exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    proc,
    apiAddress: address,
    apiUrl: `http://${address}`,
    proxyAddress: /proxy on (\S+)/.exec(out)?.[1] ?? "",
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
