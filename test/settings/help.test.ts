// `kubemoot-scheduler <command> --help`, run as a process, lists exactly the variables the
// settings registry says the command reads: each flag's variable, and the rest in its
// Environment section.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { commandLoaders } from "../../src/cli/commands/index.js";
import { repoRoot } from "../../src/repo-root.js";
import { COMMANDS, settingsReadBy } from "../../src/settings/index.js";
import { assertBuilt } from "../helpers/sidecar-process.js";

const run = promisify(execFile);
const ROOT = repoRoot();
const BIN = path.join(ROOT, "bin", "kubemoot-scheduler.js");

describe("--help and the settings registry", () => {
  it("knows the same commands as the CLI", () => {
    expect([...COMMANDS].sort()).toEqual(Object.keys(commandLoaders).sort());
  });

  it.each(COMMANDS)("%s --help lists exactly the variables it reads", async (command) => {
    assertBuilt();
    const { stdout } = await run(process.execPath, [BIN, command, "--help"], { cwd: ROOT });
    expect(stdout).toContain(`Usage: kubemoot-scheduler ${command}`);
    const listed = new Set(stdout.match(/KUBEMOOT_[A-Z0-9_]+/g) ?? []);
    expect([...listed].sort()).toEqual(
      settingsReadBy(command)
        .map((s) => s.name)
        .sort(),
    );
  });
});
