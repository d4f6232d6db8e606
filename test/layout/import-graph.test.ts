// The layout's rules, checked on the imports as written (test/layout/imports.ts reads them):
// the folders of src/ and sidecar/ form no cycle, the placement core, the binder and the
// settings registry are pure, product code reaches neither tests nor benchmarks, and src/ never
// reaches sidecar/.
import { describe, expect, it } from "vitest";
import {
  cycles,
  describeCycle,
  folderGraph,
  type Import,
  importsOf,
  isTestFile,
  tsFiles,
} from "./imports.js";

// src/gen is generated code (protobuf); it is a node like any other, and imports only packages.
const files = tsFiles(["src", "sidecar"]);
const imports = files.flatMap(importsOf);
const product = imports.filter((i) => !isTestFile(i.from));

function show(list: readonly Import[]): string {
  return list.map((i) => `  ${i.from}: "${i.specifier}"`).join("\n");
}

/** Imports from files of `folder` that leave it for anything but `allowed` (repository folders). */
function leaving(folder: string, allowed: readonly string[]): Import[] {
  return product.filter(
    (i) =>
      i.from.startsWith(`${folder}/`) &&
      (i.target === undefined || ![folder, ...allowed].some((a) => i.target!.startsWith(`${a}/`))),
  );
}

describe("the import graph of src/ and sidecar/", () => {
  it("reads the imports of every file (the reader finds what it should)", () => {
    expect(files.length).toBeGreaterThan(300);
    expect(files).toContain("src/core/planner.ts");
    expect(files).toContain("sidecar/main.ts");
    // A dynamic import, a re-export and an `import("…")` type are all read.
    const cli = importsOf("src/cli/commands/index.ts").map((i) => i.target);
    expect(cli).toContain("src/cli/commands/sidecar.ts");
    expect(importsOf("src/core/index.ts").every((i) => i.target?.startsWith("src/core/"))).toBe(true);
  });

  // Product files only: a unit test may run another folder as a real part (src/engines' DCGM
  // test scrapes src/emulator's exporter) without the product depending on it.
  it("has no cycle among the folders (src/<top>, sidecar/<top>)", () => {
    const graph = folderGraph(product);
    const found = cycles(graph);
    const message = found.map(
      (c, n) =>
        `cycle ${n + 1} among ${c.nodes.join(", ")}: ${c.path.join(" -> ")}\n${describeCycle(graph, c.path)}`,
    );
    expect(message.join("\n"), "folder cycles").toBe("");
  });

  // Node built-ins and npm packages too: the core is plain computation over its own shapes.
  it("src/core imports nothing outside src/core (its tests may use vitest, fast-check and test/)", () => {
    expect(show(leaving("src/core", [])), "imports leaving src/core").toBe("");
  });

  it("src/binding imports only itself, src/core, src/errors and src/settings", () => {
    expect(
      show(leaving("src/binding", ["src/core", "src/errors", "src/settings"])),
      "imports leaving src/binding",
    ).toBe("");
  });

  // The registry's names reach src/binding, so it must be as pure as the binder.
  it("src/settings imports only itself, src/core and src/errors", () => {
    expect(show(leaving("src/settings", ["src/core", "src/errors"])), "imports leaving src/settings").toBe(
      "",
    );
  });

  it("no product file imports from test/ or bench/", () => {
    const bad = product.filter((i) => i.target?.startsWith("test/") || i.target?.startsWith("bench/"));
    expect(show(bad), "product imports of tests or benchmarks").toBe("");
  });

  // Builders, harnesses and parsers that only tests use live under test/ (test/helpers and the
  // fixtures beside integration tests), not among the product's modules.
  it("every product module is used by the product or a benchmark (entry points aside)", () => {
    const users = new Map<string, Set<string>>();
    for (const i of [...imports, ...tsFiles(["bench"]).flatMap(importsOf)]) {
      if (i.target === undefined || isTestFile(i.from)) continue;
      users.set(i.target, (users.get(i.target) ?? new Set()).add(i.from));
    }
    // bin/kubemoot-scheduler.js runs their builds: the CLI, and the host it gets from sidecar/.
    const entryPoints = ["src/cli/index.ts", "sidecar/cli-host.ts"];
    // Built and tested rules that nothing applies yet, each named in its docs as not wired.
    const unwired = [
      // Weights locality (docs/rules/topology.md §3): no source of NodeModelStore objects yet.
      "src/topology/weights.ts",
    ];
    const unused = files.filter(
      (f) => !isTestFile(f) && ![...entryPoints, ...unwired].includes(f) && !users.has(f),
    );
    // An unwired file that gains a user leaves the list.
    expect(
      unwired.filter((f) => users.has(f)),
      "unwired files now used",
    ).toEqual([]);
    expect(unused.join("\n"), "product modules only tests import (or nothing does)").toBe("");
  });

  // The sidecar uses src/; the CLI starts it through the SidecarHost that
  // bin/kubemoot-scheduler.js passes in (src/cli/host.ts), so no file in src/ knows sidecar/.
  it("no file in src/ imports sidecar/", () => {
    const bad = imports.filter((i) => i.from.startsWith("src/") && i.target?.startsWith("sidecar/"));
    expect(show(bad), "imports of sidecar/ from src/").toBe("");
  });
});
