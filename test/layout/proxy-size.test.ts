// The proxy stays readable in pieces (docs/design.md §11): no product file in sidecar/proxy over 350
// lines, and no function there over 80 lines, nested closures counted in their function's
// length. Functions are read with the TypeScript parser, so a line count never mistakes a
// string or comment for code.
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { isTestFile, ROOT, tsFiles } from "./imports.js";

const MAX_FILE_LINES = 350;
const MAX_FUNCTION_LINES = 80;

interface Sized {
  name: string;
  lines: number;
}

function source(file: string): ts.SourceFile {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

function fileLines(sf: ts.SourceFile): number {
  return sf.getLineAndCharacterOfPosition(sf.getEnd()).line + (sf.text.endsWith("\n") ? 0 : 1);
}

/** A readable name for a function node: its own, its variable's or property's, or its line. */
function nameOf(sf: ts.SourceFile, node: ts.FunctionLikeDeclaration): string {
  const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  let name = node.name && !ts.isComputedPropertyName(node.name) ? node.name.getText(sf) : undefined;
  const parent = node.parent;
  if (name === undefined && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))) {
    name = parent.name.getText(sf);
  }
  if (ts.isConstructorDeclaration(node)) name = "constructor";
  return `${name ?? "(anonymous)"} (line ${line})`;
}

/** Every function-like node of a file (declarations, methods, accessors, arrows, expressions). */
function functions(sf: ts.SourceFile): Sized[] {
  const out: Sized[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const fn = node as ts.FunctionLikeDeclaration;
      const start = sf.getLineAndCharacterOfPosition(fn.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(fn.getEnd()).line;
      out.push({ name: nameOf(sf, fn), lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe("the size of sidecar/proxy", () => {
  const files = tsFiles(["sidecar/proxy"]).filter((f) => !isTestFile(f));

  it("reads every product file and every kind of function in it", () => {
    expect(files).toContain("sidecar/proxy/server.ts");
    expect(files).toContain("sidecar/proxy/translate/stream.ts");
    expect(files.some(isTestFile)).toBe(false);
    const sample = ts.createSourceFile(
      "sample.ts",
      "function a() {\n}\nconst b = () => {\n\n};\nclass C { m() { return 1; } get g() { return 2; } constructor() {} }\nconst d = function () {};\n",
      ts.ScriptTarget.Latest,
      true,
    );
    expect(functions(sample).map((f) => [f.name.split(" ")[0], f.lines])).toEqual([
      ["a", 2],
      ["b", 3],
      ["m", 1],
      ["g", 1],
      ["constructor", 1],
      ["d", 1],
    ]);
  });

  it(`has no product file over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: fileLines(source(file)) }))
      .filter((f) => f.lines > MAX_FILE_LINES)
      .map((f) => `  ${f.file}: ${f.lines} lines`);
    expect(long.join("\n"), `files over ${MAX_FILE_LINES} lines`).toBe("");
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files.flatMap((file) =>
      functions(source(file))
        .filter((f) => f.lines > MAX_FUNCTION_LINES)
        .map((f) => `  ${file}: ${f.name}: ${f.lines} lines`),
    );
    expect(long.join("\n"), `functions over ${MAX_FUNCTION_LINES} lines`).toBe("");
  });
});
