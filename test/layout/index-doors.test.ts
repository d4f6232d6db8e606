// A folder's index.ts is its only door (docs/design.md §3): every import of another folder's
// file goes through that folder's index, no two product files import each other round a loop,
// and an index exports only names some file outside its folder uses (or bin/ runs).
import { describe, expect, it } from "vitest";
import {
  cycles,
  describeCycle,
  doorOf,
  exportedNames,
  fileGraph,
  importsOf,
  isTestFile,
  namedImportsOf,
  tsFiles,
} from "./imports.js";

const files = tsFiles(["src", "sidecar"]);
const imports = files.flatMap(importsOf);

describe("each folder's index.ts is its door", () => {
  // Tests beside code too: a test of another folder is a client of its door like any other.
  it("every import of another folder's file goes through that folder's index.ts", () => {
    const bypasses = imports.flatMap((i) => {
      const door = i.target === undefined ? undefined : doorOf(i.from, i.target);
      return door === undefined || door === i.target ? [] : [`  ${i.from}: "${i.specifier}" (door: ${door})`];
    });
    expect(bypasses.join("\n"), "imports around a folder's index.ts").toBe("");
  });

  it("the reader of doors finds the outermost folder's index", () => {
    expect(doorOf("src/state/claim.ts", "src/core/policies/time.ts")).toBe("src/core/index.ts");
    expect(doorOf("src/core/planner.ts", "src/core/policies/time.ts")).toBe("src/core/policies/index.ts");
    expect(doorOf("src/core/planner.ts", "src/core/snapshot.ts")).toBeUndefined();
    expect(doorOf("sidecar/main.ts", "sidecar/proxy/server.ts")).toBe("sidecar/proxy/index.ts");
  });

  // Folder cycles are test/layout/import-graph.test.ts's; this is the finer grain, where a
  // cycle through index files would leave one module's bindings undefined while the other loads.
  it("has no cycle among product files", () => {
    const graph = fileGraph(imports.filter((i) => !isTestFile(i.from)));
    const found = cycles(graph).map(
      (c, n) => `cycle ${n + 1}: ${c.path.join(" -> ")}\n${describeCycle(graph, c.path)}`,
    );
    expect(found.join("\n"), "file cycles").toBe("");
  });

  it("every name an index.ts exports is used outside its folder", () => {
    const indexes = files.filter((f) => f.endsWith("/index.ts") && !f.startsWith("src/gen/"));
    const users = [...tsFiles(["src", "sidecar", "test", "bench"]), "bin/kubemoot-scheduler.js"];
    const used = new Map<string, Set<string>>();
    for (const n of users.flatMap(namedImportsOf)) {
      const folder = n.target.slice(0, -"/index.ts".length);
      if (!n.target.endsWith("/index.ts") || n.from.startsWith(`${folder}/`)) continue;
      const names = used.get(n.target) ?? new Set<string>();
      for (const name of n.names === "*" ? ["*"] : n.names) names.add(name);
      used.set(n.target, names);
    }
    const unused: string[] = [];
    for (const [index, names] of exportedNames(indexes)) {
      const by = used.get(index) ?? new Set<string>();
      if (by.has("*")) continue;
      const idle = names.filter((name) => !by.has(name));
      if (idle.length > 0) unused.push(`  ${index}: ${idle.join(", ")}`);
    }
    expect(unused.join("\n"), "exported by an index.ts, used by nothing outside its folder").toBe("");
  });
});
