// `kubemoot-scheduler emulate` as a real process: built with tsc, started with the flags of
// docs/design.md §2, talked to over HTTP, stopped with SIGTERM.
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseNdjson, parseSse, postJson } from "../helpers/emulator-http.js";

const root = resolve(import.meta.dirname, "../..");
const bin = join(root, "bin/kubemoot-scheduler.js");
const run = promisify(execFile);

interface Running {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

async function startCli(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [bin, "emulate", ...args], { cwd: root, env: { ...process.env } });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += d.toString();
  });
  child.stderr.on("data", (d) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line; stdout=${out} stderr=${err}`)),
      20_000,
    );
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1] as string);
      }
    };
    child.stdout.on("data", check);
    child.on("exit", () => {
      clearTimeout(timer);
      reject(new Error(`emulator exited early; stdout=${out} stderr=${err}`));
    });
  });
  return { child, url, stdout: () => out, exited };
}

beforeAll(async () => {
  // Build what the bin runs. Errors elsewhere in the tree do not stop tsc from emitting.
  await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: root,
  }).catch(() => undefined);
  expect(existsSync(join(root, "dist/src/emulator/index.js"))).toBe(true);
}, 120_000);

describe("kubemoot-scheduler emulate", () => {
  let emu: Running;
  beforeAll(async () => {
    emu = await startCli([
      "--listen",
      "127.0.0.1:0",
      "--vram-mib",
      "24563",
      "--model",
      "qwen3:8b=4863",
      "--model",
      "qwen3:14b=9000",
      "--time-scale",
      "0.01",
      "--output-tokens",
      "6",
    ]);
  });
  afterAll(() => {
    if (emu.child.exitCode === null) emu.child.kill("SIGKILL");
  });

  it("serves /api/tags and /api/ps", async () => {
    const tags = (await (await fetch(`${emu.url}/api/tags`)).json()) as {
      models: Array<{ name: string; size: number }>;
    };
    expect(tags.models.map((m) => [m.name, m.size / 1024 / 1024])).toEqual([
      ["qwen3:8b", 4863],
      ["qwen3:14b", 9000],
    ]);
    expect(await (await fetch(`${emu.url}/api/ps`)).json()).toEqual({ models: [] });
  });

  it("streams /api/chat as NDJSON and loads the model with its KV slab", async () => {
    const res = await postJson(`${emu.url}/api/chat`, {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "hello" }],
    });
    const lines = parseNdjson(res.text);
    expect(lines).toHaveLength(7);
    expect(lines.at(-1)).toMatchObject({ done: true, done_reason: "stop", eval_count: 6 });
    const ps = (await (await fetch(`${emu.url}/api/ps`)).json()) as {
      models: Array<{ name: string; size_vram: number; context_length: number }>;
    };
    // 24563 MiB → default num_ctx 32768; KV = 32768 × 0.125 MiB = 4096 MiB.
    expect(ps.models).toEqual([
      expect.objectContaining({
        name: "qwen3:8b",
        context_length: 32_768,
        size_vram: (4863 + 4096) * 1024 * 1024,
      }),
    ]);
  });

  it("streams /v1/chat/completions as SSE", async () => {
    const res = await postJson(`${emu.url}/v1/chat/completions`, {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "hello" }],
      stream: true,
    });
    const events = parseSse(res.text);
    expect(events.at(-1)).toBe("[DONE]");
    expect(events).toHaveLength(6 + 2);
  });

  it("takes faults at run time and still answers bad input", async () => {
    const set = await postJson(`${emu.url}/_emulator/faults`, { faults: [{ kind: "error", count: 1 }] });
    expect(set.status).toBe(200);
    expect((await fetch(`${emu.url}/api/version`)).status).toBe(500);
    const bad = await postJson(`${emu.url}/api/chat`, "{not json");
    expect(bad.status).toBe(400);
    expect((await fetch(`${emu.url}/api/version`)).status).toBe(200);
  });

  it("stops cleanly on SIGTERM", async () => {
    emu.child.kill("SIGTERM");
    expect(await emu.exited).toBe(0);
    expect(emu.stdout()).toMatch(/stopped/);
  });
});

describe("emulate configuration", () => {
  it("reads --config and lets flags win", async () => {
    const dir = await mkdtemp(join(tmpdir(), "emulate-cli-"));
    const file = join(dir, "emu.yaml");
    await writeFile(file, "vramMiB: 16000\nnumParallel: 2\nmodels:\n  tiny:1b: 800\n");
    const emu = await startCli([
      "--config",
      file,
      "--listen",
      "127.0.0.1:0",
      "--num-parallel",
      "3",
      "--dcgm",
    ]);
    try {
      const state = (await (await fetch(`${emu.url}/_emulator/state`)).json()) as Record<string, unknown>;
      expect(state).toMatchObject({ vramMiB: 16_000, numParallel: 3, contextLength: 4096 });
      const metrics = await (await fetch(`${emu.url}/metrics`)).text();
      expect(metrics).toMatch(/DCGM_FI_DEV_FB_TOTAL\{[^}]*\} 16000/);
    } finally {
      emu.child.kill("SIGINT");
      expect(await emu.exited).toBe(0);
    }
  });

  it("rejects bad flags with exit code 2 and a clear message", async () => {
    const err = await run(process.execPath, [bin, "emulate", "--vram-mib", "lots"], { cwd: root }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr).toMatch(/--vram-mib: expected a number, got "lots"/);
    const bad = await run(process.execPath, [bin, "emulate", "--model", "qwen3:8b"], { cwd: root }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toMatch(/NAME=ON_DISK_MIB/);
  });

  it("--engine vllm plays vLLM and refuses two models with exit code 2", async () => {
    const emu = await startCli(["--engine", "vllm", "--listen", "127.0.0.1:0", "--model", "qwen3:8b=4863"]);
    try {
      expect(emu.stdout()).toMatch(/as vllm \(qwen3:8b, .*slots 256, context 40960/);
      const models = (await (await fetch(`${emu.url}/v1/models`)).json()) as {
        data: Array<{ max_model_len: number }>;
      };
      expect(models.data[0]?.max_model_len).toBe(40_960);
      expect((await fetch(`${emu.url}/api/tags`)).status).toBe(404);
    } finally {
      emu.child.kill("SIGTERM");
      expect(await emu.exited).toBe(0);
    }
    const two = await run(
      process.execPath,
      [bin, "emulate", "--engine", "llamacpp", "--model", "a:1b=800", "--model", "b:1b=800"],
      { cwd: root },
    ).catch((e: { code: number; stderr: string }) => e);
    expect((two as { code: number }).code).toBe(2);
    expect((two as { stderr: string }).stderr).toMatch(/llama\.cpp server serves exactly one model; got 2/);
    const engine = await run(process.execPath, [bin, "emulate", "--engine", "tgi"], { cwd: root }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((engine as { stderr: string }).stderr).toMatch(
      /engine.*must be one of ollama, vllm, llamacpp, sglang/,
    );
  });

  it("--help lists the fixed flags", async () => {
    const { stdout } = await run(process.execPath, [bin, "emulate", "--help"], { cwd: root });
    for (const flag of [
      "--listen",
      "--vram-mib",
      "--model",
      "--num-parallel",
      "--context-length",
      "--time-scale",
      "--engine",
      "--engine-version",
      "--slots",
      "--kv-cache-tokens",
    ]) {
      expect(stdout).toContain(flag);
    }
  });
});
