// The client examples of clients/ that need only Node and curl (TypeScript over gRPC, curl),
// each run as a real process against a live sidecar (embedded state, probing an emulated GPU).
// Python and Go have their own files in the "clients" project (npm run test:clients).
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

describe("client examples against a live sidecar", () => {
  it("TypeScript (gRPC): places, runs on the emulator, releases", async () => {
    const { stdout } = await run(process.execPath, [
      path.join(repoRoot, "dist/clients/typescript/example.js"),
      live.sidecar.apiUrl,
      "team/ts-agent",
      "qwen3:8b",
    ]);
    expect(stdout).toMatch(/placed on gpu-a \(http:\/\/127\.0\.0\.1:\d+\) model qwen3:8b/);
    expect(stdout).toMatch(/answer: \S+/);
  });

  it("curl: Place, Release, Attribute, health and metrics", async () => {
    const { stdout } = await run("bash", [
      path.join(repoRoot, "clients/curl/examples.sh"),
      live.sidecar.apiUrl,
      "team/curl-agent",
      "qwen3:8b",
    ]);
    expect(stdout).toMatch(/Place: \{"placement":\{.*"provider":"gpu-a"/);
    expect(stdout).toContain('{"released":true}');
    expect(stdout).toMatch(/"latencyMs":"850"/);
    expect(stdout).toContain('{"status":"serving"}');
    expect(stdout).toMatch(/kubemoot_place_total\{result="placed"/);
  });

  it("left no ticket behind", async () => {
    expect(await live.metric("kubemoot_tickets_active")).toBe("kubemoot_tickets_active 0");
    expect(await live.metric("kubemoot_release_total")).toContain('outcome="succeeded"} 2');
  });
});
