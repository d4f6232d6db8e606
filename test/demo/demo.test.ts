// `kubemoot-scheduler demo` as a real process for 20 s (stdout not a TTY): it exits 0, and what
// it printed shows placements on both GPUs, at least one cold load and one warm reuse.
import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { assertBuilt, repoRoot } from "../helpers/sidecar-process.js";

it("runs for its duration, places on both GPUs, loads cold and reuses warm, and exits 0", async () => {
  assertBuilt();
  const proc = spawn(
    process.execPath,
    [
      path.join(repoRoot, "bin/kubemoot-scheduler.js"),
      "demo",
      "--duration",
      "20",
      "--speed",
      "20",
      "--seed",
      "7",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  proc.stdout.on("data", (d) => {
    out += d;
  });
  proc.stderr.on("data", (d) => {
    out += d;
  });
  const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
  expect(code, out).toBe(0);
  const summary = /summary: calls (\d+), ok (\d+) \(([^)]*)\), cold loads (\d+), warm (\d+)/.exec(out);
  expect(summary, out).not.toBeNull();
  const [, , ok, byProvider, cold, warm] = summary!;
  expect(Number(ok)).toBeGreaterThan(0);
  expect(byProvider).toMatch(/ollama-a \d+/);
  expect(byProvider).toMatch(/ollama-b \d+/);
  expect(Number(cold)).toBeGreaterThanOrEqual(1);
  expect(Number(warm)).toBeGreaterThanOrEqual(1);
  // Per-call lines (not a TTY) name the provider and whether the model was cold or warm.
  expect(out).toMatch(/→ ollama-a\s+cold/);
  expect(out).toMatch(/→ ollama-b\s+(cold|warm)/);
  // The periodic status line shows the cards.
  expect(out).toMatch(/\[\d+s\] ollama-a: /);
}, 60_000);
