// The child processes of bench proxy (the emulators and the sidecars, as in a pod): each is this
// folder's script run by the same node, given its arguments as JSON in argv[2], and ready when it
// prints "READY <url> [<url2>]"; stopped with SIGTERM, killed if it has not exited in time.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { childNodeArgs } from "../lib/child-node-args.js";

const here = path.dirname(fileURLToPath(import.meta.url));

export interface Child {
  proc: ChildProcess;
  url: string;
  /** A second URL the child printed (the sidecar's API), or "". */
  url2: string;
  lines: AsyncIterator<string>;
}

export async function startChild(script: string, childArgs: unknown): Promise<Child> {
  const proc = spawn(
    process.execPath,
    [...childNodeArgs(), path.join(here, script), JSON.stringify(childArgs)],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  const first = await lines.next();
  const m = /^READY (\S+)(?: (\S+))?$/.exec(String(first.value ?? ""));
  if (first.done || !m) {
    proc.kill("SIGTERM");
    throw new Error(`${script} did not start (got ${JSON.stringify(first.value)})`);
  }
  return { proc, url: m[1] as string, url2: m[2] ?? "", lines };
}

/** SIGTERM, then SIGKILL if the child has not exited within `graceMs`. */
export async function stopChild(c: Child, graceMs = 3000): Promise<void> {
  const gone = () => c.proc.exitCode !== null || c.proc.signalCode !== null;
  if (gone()) return;
  const exited = new Promise<void>((resolve) => c.proc.once("exit", () => resolve()));
  c.proc.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
  if (!gone()) c.proc.kill("SIGKILL");
}
