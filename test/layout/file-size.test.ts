// No TypeScript file outside src/gen (generated) is over 500 lines, tests included: a longer
// file holds more than one concept and is split by concept.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tsFiles } from "./imports.js";

const LIMIT = 500;

function lines(file: string): number {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

describe("file size", () => {
  const files = tsFiles(["src", "sidecar", "test", "bench", "clients/typescript"], ["src/gen"]);

  it("reads every TypeScript file but the generated ones", () => {
    expect(files).toContain("test/layout/file-size.test.ts");
    expect(files.some((f) => f.startsWith("src/gen/"))).toBe(false);
    expect(lines("test/layout/file-size.test.ts")).toBeGreaterThan(10);
  });

  it(`no file outside src/gen is over ${LIMIT} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: lines(file) }))
      .filter((f) => f.lines > LIMIT)
      .map((f) => `  ${f.file}: ${f.lines} lines`);
    expect(long.join("\n"), `files over ${LIMIT} lines`).toBe("");
  });
});
