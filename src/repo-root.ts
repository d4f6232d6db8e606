// The repository root (the folder holding package.json), found from this module so that it
// works from src/ (vitest) and from dist/src/ (the built CLI and benchmarks) alike. Shipped
// files the code reads at run time (proto/, examples/, bin/) are found from here.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

export function repoRoot(): string {
  if (cached === undefined) {
    let dir = path.dirname(fileURLToPath(import.meta.url));
    while (!existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    cached = dir;
  }
  return cached;
}
