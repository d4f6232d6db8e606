// The Python client example (Connect JSON, standard library only), run with python3 against a
// live sidecar (embedded state, probing an emulated GPU). In the "clients" project: it needs
// python3 on PATH (npm run test:clients). A missing python3 fails here, never skips.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { repoRoot, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

const run = promisify(execFile);
let emulator: EmulatorHandle;
let sidecar: SidecarProcess;

beforeAll(async () => {
  emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { "qwen3:8b": 4863 },
    timeScale: 0.01,
  });
  sidecar = await startSidecarProcess([
    "--state",
    "memory",
    "--provider",
    `gpu-a=${emulator.url},vram=24563`,
    "--proxy-listen",
    "",
  ]);
});

afterAll(async () => {
  expect(await sidecar?.stop()).toBe(0);
  await emulator?.close();
});

async function metric(name: string): Promise<string> {
  const text = await (await fetch(`${sidecar.apiUrl}/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith(name))
    .join("\n");
}

describe("Python client example against a live sidecar", () => {
  it("places, runs on the emulator, releases with the outcome", async () => {
    const { stdout } = await run("python3", [
      path.join(repoRoot, "clients/python/example.py"),
      sidecar.apiUrl,
      "team/py-agent",
      "qwen3:8b",
    ]);
    expect(stdout).toMatch(/placed on gpu-a .* model qwen3:8b/);
    expect(stdout).toContain("released: True");
  });

  it("left no ticket behind, and reported the call as succeeded", async () => {
    expect(await metric("kubemoot_tickets_active")).toBe("kubemoot_tickets_active 0");
    expect(await metric("kubemoot_release_total")).toContain('outcome="succeeded"} 1');
  });
});
