// Every KUBEMOOT_* variable is named once, in the settings registry (src/settings): product code
// refers to SETTINGS.<key>.name instead of writing the name, so that a name is changed, read and
// documented in one place. Comments may name variables; strings may not. Error codes
// (src/errors) share the prefix and are not variables.
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors/index.js";
import { isTestFile, ROOT, tsFiles } from "./imports.js";

const NAME = /KUBEMOOT_[A-Z0-9_]*/g;
const CODES = new Set<string>(Object.values(ErrorCode));

/** `file: name` for each variable name in a string literal or template of `file`. */
function namesInStrings(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteralLike(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      for (const m of node.text.matchAll(NAME)) if (!CODES.has(m[0])) out.push(`${file}: ${m[0]}`);
    } else if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name)) {
      // An env object's key, e.g. { KUBEMOOT_POLICY: "time" }.
      const m = NAME.exec(node.name.text);
      NAME.lastIndex = 0;
      if (m !== null && m[0] === node.name.text && !CODES.has(m[0])) out.push(`${file}: ${m[0]}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe("variable names in product code", () => {
  const files = tsFiles(["src", "sidecar"], ["src/gen", "src/settings"]).filter((f) => !isTestFile(f));
  let written: Set<string> | undefined;
  const found = () => {
    written ??= new Set(files.flatMap(namesInStrings));
    return written;
  };

  it("finds a name written in a string (the reader works)", () => {
    expect(namesInStrings("src/settings/state.ts")).toContain("src/settings/state.ts: KUBEMOOT_STATE");
    expect(namesInStrings("src/errors/kubemoot-error.ts")).toEqual([]);
  });

  it("only src/settings writes a KUBEMOOT_* variable's name", () => {
    expect([...found()].join("\n"), "names written outside src/settings").toBe("");
  });
});
