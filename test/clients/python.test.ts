// The Python client example (Connect JSON, standard library only), run with python3 against a
// live sidecar (embedded state, probing an emulated GPU). In the "clients" project: it needs
// python3 on PATH (npm run test:clients). A missing python3 fails here, never skips.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientSidecar, startClientSidecar } from "../helpers/client-sidecar.js";
import { repoRoot } from "../helpers/sidecar-process.js";

const run = promisify(execFile);
let live: ClientSidecar;

beforeAll(async () => {
  live = await startClientSidecar();
});

afterAll(async () => {
  expect(await live?.stop()).toBe(0);
});

describe("Python client example against a live sidecar", () => {
  it("places, runs on the emulator, releases with the outcome", async () => {
    const { stdout } = await run("python3", [
      path.join(repoRoot, "clients/python/example.py"),
      live.sidecar.apiUrl,
      "team/py-agent",
      "qwen3:8b",
    ]);
    expect(stdout).toMatch(/placed on gpu-a .* model qwen3:8b/);
    expect(stdout).toContain("released: True");
  });

  it("left no ticket behind, and reported the call as succeeded", async () => {
    expect(await live.metric("kubemoot_tickets_active")).toBe("kubemoot_tickets_active 0");
    expect(await live.metric("kubemoot_release_total")).toContain('outcome="succeeded"} 1');
  });
});
