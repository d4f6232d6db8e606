// Issue 17: the NATS password is never printed. A sidecar process started against an
// unreachable nats://user:secret@… fails at start with a clear message that names the server,
// and the password appears nowhere in what it printed.
import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { assertBuilt, repoRoot } from "../helpers/sidecar-process.js";

function runSidecar(args: string[]): Promise<{ code: number | null; out: string }> {
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
  proc.stdout.on("data", (d) => {
    out += d;
  });
  proc.stderr.on("data", (d) => {
    out += d;
  });
  return new Promise((resolve) => proc.once("close", (code) => resolve({ code, out })));
}

it("an unreachable NATS with a password in its URL: a clear error, and the password nowhere", async () => {
  const { code, out } = await runSidecar([
    "--nats",
    "nats://kubemoot:s3cr3t-pw@127.0.0.1:1",
    "--agent",
    "crew/a1",
    "--proxy-listen",
    "",
  ]);
  expect(code).not.toBe(0);
  expect(out).toMatch(/cannot connect to nats:\/\/\*\*\*@127\.0\.0\.1:1/);
  expect(out).not.toContain("s3cr3t-pw");
}, 30_000);

it("a token in the URL is hidden too", async () => {
  const { code, out } = await runSidecar(["--nats", "nats://t0ken-value@127.0.0.1:1", "--proxy-listen", ""]);
  expect(code).not.toBe(0);
  expect(out).toContain("127.0.0.1:1");
  expect(out).not.toContain("t0ken-value");
}, 30_000);
