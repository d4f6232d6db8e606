// One call loop (docs/design.md §3): the product decides placements only through src/scheduler.
// Outside it (and the core that defines them), no product file imports the planner's entry
// points or the call policy's wait rule, so no second place→wait loop can be written around
// them; the simulation drives the Scheduler itself. Benchmarks of the bare decision may.
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { isTestFile, ROOT, tsFiles } from "./imports.js";

/** What a loop is made of: planning a call, and deciding whether a refusal is waited out. */
const LOOP_PARTS = new Set(["plan", "decide", "indexSnapshot", "afterRefusal"]);

/** Names `file` imports from src/core's index, with the line they are on. */
function coreImports(file: string): { name: string; line: number }[] {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: { name: string; line: number }[] = [];
  for (const node of source.statements) {
    if (!ts.isImportDeclaration(node) || !ts.isStringLiteral(node.moduleSpecifier)) continue;
    const target = path.relative(
      ROOT,
      path.resolve(path.dirname(path.join(ROOT, file)), node.moduleSpecifier.text),
    );
    if (target.split(path.sep).join("/") !== "src/core/index.js") continue;
    const named = node.importClause?.namedBindings;
    if (named === undefined || !ts.isNamedImports(named)) continue;
    for (const el of named.elements) {
      const line = source.getLineAndCharacterOfPosition(el.getStart(source)).line + 1;
      out.push({ name: (el.propertyName ?? el.name).text, line });
    }
  }
  return out;
}

describe("one call loop", () => {
  const files = tsFiles(["src", "sidecar", "bench"]).filter((f) => !isTestFile(f));

  it("reads the imports it checks (the scheduler's own use is found)", () => {
    const names = coreImports("src/scheduler/call-loop.ts").map((i) => i.name);
    expect(names).toContain("afterRefusal");
    expect(coreImports("src/scheduler/scheduler.ts").map((i) => i.name)).toContain("plan");
  });

  it("only src/scheduler (and benchmarks of the bare decision) plan calls or judge waits", () => {
    const allowed = (f: string) =>
      f.startsWith("src/core/") || f.startsWith("src/scheduler/") || f.startsWith("bench/decide/");
    const offenders = files
      .filter((f) => !allowed(f))
      .flatMap((f) =>
        coreImports(f)
          .filter((i) => LOOP_PARTS.has(i.name))
          .map((i) => `  ${f}:${i.line} ${i.name}`),
      );
    expect(offenders.join("\n"), "loop parts imported outside src/scheduler").toBe("");
  });

  it("the simulation's sidecar policies run the Scheduler", () => {
    const text = readFileSync(path.join(ROOT, "src/sim/policies/ours.ts"), "utf8");
    expect(text).toMatch(/import \{[^}]*\bScheduler\b[^}]*\} from "\.\.\/\.\.\/scheduler\/index\.js"/s);
    expect(text).toMatch(/\.acquire\(/);
  });
});
