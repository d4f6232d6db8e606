// Runs the built CLI's `standalone` or `operator` as a real child process (docs/web-view.md: the
// view's hosts) through startCliProcess, and reads the addresses its start lines name.
import { type CliProcess, startCliProcess } from "./sidecar-process.js";

export interface StandaloneProcess extends CliProcess {
  /** host:port of the API; empty when the command serves none (the operator). */
  readonly apiAddress: string;
  readonly proxyAddress: string;
  /** http://host:port/ of the web view; empty without one. */
  readonly webUrl: string;
}

export function startStandaloneProcess(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<StandaloneProcess> {
  return started(
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
  return started(["operator", ...args], /kubemoot-scheduler operator: running/, env, timeoutMs);
}

/**
 * `operator` on a manifests directory over NATS, probing every `probeMs` and writing its binding
 * files under `outDir`: the per-discussion tests' and benchmark's operator.
 */
export function startManifestsOperator(
  o: { manifests: string; outDir: string; natsUrl: string; probeMs: number },
  env: Record<string, string> = {},
): Promise<StandaloneProcess> {
  return startOperatorProcess(
    [
      "--manifests",
      o.manifests,
      "--bindings-dir",
      o.outDir,
      "--nats",
      o.natsUrl,
      "--probe-interval-ms",
      String(o.probeMs),
    ],
    env,
  );
}

async function started(
  argv: string[],
  line: RegExp,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<StandaloneProcess> {
  const p = await startCliProcess(argv, line, env, timeoutMs);
  const out = p.output();
  return {
    proc: p.proc,
    exited: p.exited,
    output: p.output,
    stop: p.stop,
    apiAddress: /API on ([^\s,]+)/.exec(out)?.[1] ?? "",
    proxyAddress: /proxy on ([^\s,]+)/.exec(out)?.[1] ?? "",
    webUrl: /web view on (http:\/\/\S+\/)/.exec(out)?.[1] ?? "",
  };
}
