// Issue 17: the NATS password is never printed. A sidecar process started against an
// unreachable nats://user:secret@… warns at every attempt with a clear message that names the
// server (it keeps retrying, not ready: docs/deploy.md "Start-up and readiness"), and the
// password appears nowhere in what it printed, up to its exit on SIGTERM.
import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { assertBuilt, repoRoot } from "../helpers/sidecar-process.js";

/** Runs a sidecar until it has printed `until`, then stops it with SIGTERM. */
function runSidecar(args: string[], until: RegExp): Promise<{ code: number | null; out: string }> {
  assertBuilt();
  const proc = spawn(
    process.execPath,
    [path.join(repoRoot, "bin", "kubemoot-scheduler.js"), "sidecar", "--listen", "127.0.0.1:0", ...args],
    {
      cwd: repoRoot,
      env: { ...process.env, KUBEMOOT_LOG_LEVEL: "debug" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  const onData = (d: Buffer) => {
    out += d;
    if (proc.signalCode === null && !proc.killed && until.test(out)) proc.kill("SIGTERM");
  };
  proc.stdout.on("data", onData);
  proc.stderr.on("data", onData);
  // Never left behind: a sidecar that does not print `until` is killed before the test's timeout.
  const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  return new Promise((resolve) =>
    proc.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

/** Two failed attempts: two warnings, each naming the server. */
const TWO_WARNINGS = /cannot connect to nats:[^\n]*\n[\s\S]*cannot connect to nats:[^\n]*\n/;

it("an unreachable NATS with a password in its URL: a clear warning, and the password nowhere", async () => {
  const { code, out } = await runSidecar(
    ["--nats", "nats://kubemoot:s3cr3t-pw@127.0.0.1:1", "--agent", "crew/a1", "--proxy-listen", ""],
    TWO_WARNINGS,
  );
  expect(code).toBe(0);
  expect(out).toMatch(/cannot connect to nats:\/\/\*\*\*@127\.0\.0\.1:1/);
  expect(out).not.toContain("s3cr3t-pw");
}, 30_000);

it("a token in the URL is hidden too", async () => {
  const { code, out } = await runSidecar(
    ["--nats", "nats://t0ken-value@127.0.0.1:1", "--proxy-listen", ""],
    TWO_WARNINGS,
  );
  expect(code).toBe(0);
  expect(out).toContain("127.0.0.1:1");
  expect(out).not.toContain("t0ken-value");
}, 30_000);
