// Runs the built CLI's `standalone` or `operator` as a real child process (docs/web-view.md: the
// view's hosts) and waits for its start line; the lines name the API, proxy and web view.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { assertBuilt, repoRoot } from "./sidecar-process.js";

export interface StandaloneProcess {
  readonly proc: ChildProcess;
  readonly apiAddress: string;
  readonly proxyAddress: string;
  /** http://host:port/ of the web view; empty without one. */
  readonly webUrl: string;
  readonly exited: Promise<number | null>;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const p of live) p.kill("SIGKILL");
});

export function startStandaloneProcess(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<StandaloneProcess> {
  return startCommand(
    ["standalone", "--listen", "127.0.0.1:0", ...args],
    /kubemoot-scheduler standalone: API on ([^\s,]+)/,
    env,
    timeoutMs,
  );
}

/** `operator` (files mode with --manifests); its web view's URL when given --web-listen. */
export function startOperatorProcess(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<StandaloneProcess> {
  return startCommand(["operator", ...args], /kubemoot-scheduler operator: (running)/, env, timeoutMs);
}

async function startCommand(
  argv: string[],
  line: RegExp,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<StandaloneProcess> {
  assertBuilt();
  const bin = path.join(repoRoot, "bin", "kubemoot-scheduler.js");
  const proc = spawn(process.execPath, [bin, ...argv], {
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
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`${argv[0]} did not start in ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    proc.stdout!.on("data", () => {
      if (line.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${argv[0]} exited with ${code} before starting:\n${out}`));
    });
  });
  return {
    proc,
    apiAddress: /API on ([^\s,]+)/.exec(out)?.[1] ?? "",
    proxyAddress: /proxy on ([^\s,]+)/.exec(out)?.[1] ?? "",
    webUrl: /web view on (http:\/\/\S+\/)/.exec(out)?.[1] ?? "",
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
