// `kubemoot-scheduler gguf` as a process (docs/rules/engines.md "A generated model"): a bad flag
// exits 2 with a message naming it; a good run writes the file and says how large it is.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/repo-root.js";
import { assertBuilt } from "../helpers/sidecar-process.js";

const run = promisify(execFile);
const BIN = path.join(repoRoot(), "bin", "kubemoot-scheduler.js");
const dir = mkdtempSync(path.join(tmpdir(), "kubemoot-gguf-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function gguf(...args: string[]): Promise<{ code: number; out: string }> {
  assertBuilt();
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, "gguf", ...args]);
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe("kubemoot-scheduler gguf", () => {
  it.each([
    [[], /--out/],
    [["--out", "x.gguf", "--preset", "huge"], /--preset.*tiny or bench/],
    [["--out", "x.gguf", "--seed", "-1"], /--seed/],
    [["--out", "x.gguf", "--seed", "1.5"], /--seed/],
    [["--out", "/no/such/dir/x.gguf"], /--out: cannot write "\/no\/such\/dir\/x.gguf" \(ENOENT\)/],
  ])("%j exits 2 naming the flag", async (args, message) => {
    const r = await gguf(...args);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(message);
  });

  it("writes the tiny preset and reports its size", async () => {
    const file = path.join(dir, "m.gguf");
    const r = await gguf("--out", file, "--seed", "5");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`${statSync(file).size} bytes, seed 5, preset tiny`);
  });
});
