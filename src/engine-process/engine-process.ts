// `kubemoot-scheduler engine` as a child process (docs/rules/engines.md "A real llama.cpp
// engine"): the demo, the benches and the tests run the real llama.cpp so, never in their own
// process, because a model llama.cpp cannot take may abort inside ggml. Starting waits for the
// line that names the address and the models served; stopping sends SIGTERM, then SIGKILL.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { repoRoot } from "../repo-root.js";

export interface EngineProcessOptions {
  /** The directory of .gguf models to serve. */
  modelsDir: string;
  /** HOST:PORT; default 127.0.0.1:0 (a free port). */
  listen?: string;
  /** More engine flags (--parallel, --ctx, --threads). */
  args?: readonly string[];
  /** How long to wait for the engine to listen (ms); default 30 000. */
  timeoutMs?: number;
}

export interface EngineProcess {
  readonly proc: ChildProcess;
  readonly url: string;
  /** The models served, with a slot's context and the slots, as the engine announced them. */
  readonly models: readonly { id: string; nCtx: number; slots: number }[];
  /** The exit code once the process has exited (null: ended by a signal). */
  readonly exited: Promise<number | null>;
  /** Everything it printed. */
  output(): string;
  /** SIGTERM (or `signal`), SIGKILL after 15 s; the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const live = new Set<ChildProcess>();
let reaper = false;

const ANNOUNCE = /listening on (http:\/\/\S+?); threads \d+; (.*)\n/;

export async function startEngineProcess(o: EngineProcessOptions): Promise<EngineProcess> {
  if (!reaper) {
    // An engine must not outlive the process that started it.
    process.once("exit", () => {
      for (const p of live) p.kill("SIGKILL");
    });
    reaper = true;
  }
  const bin = path.join(repoRoot(), "bin", "kubemoot-scheduler.js");
  const proc = spawn(
    process.execPath,
    [bin, "engine", "--listen", o.listen ?? "127.0.0.1:0", "--models", o.modelsDir, ...(o.args ?? [])],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
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
  const timeoutMs = o.timeoutMs ?? 30_000;
  const announced = await new Promise<RegExpExecArray>((resolve, reject) => {
    const fail = (why: string) =>
      reject(new KubemootError(ErrorCode.ProviderFailure, `the llama.cpp engine ${why}:\n${out.trim()}`));
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      fail(`did not start in ${timeoutMs / 1000} s`);
    }, timeoutMs);
    proc.stdout!.on("data", () => {
      const m = ANNOUNCE.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(`exited with ${code} before listening`);
    });
  });
  const models = [...announced[2]!.matchAll(/(\S+) \(n_ctx (\d+) × (\d+) slots\)/g)].map((m) => ({
    id: m[1]!,
    nCtx: Number(m[2]),
    slots: Number(m[3]),
  }));
  return {
    proc,
    url: announced[1]!,
    models,
    exited,
    output: () => out,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      const t = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}
