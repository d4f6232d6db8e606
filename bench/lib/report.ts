// Shared benchmark reporting (docs/benchmarks.md): every benchmark writes one JSON object to
// bench/results/<name>.json and prints a short Markdown table, with the seed, the versions and
// the machine it ran on. Absolute times are printed, never asserted; targets are ratios
// against baselines measured in the same run.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { repoRoot as findRepoRoot } from "../../src/repo-root.js";

/** The repository root (works from both bench/lib and dist/bench/lib). */
export const repoRoot = findRepoRoot();

export interface RunInfo {
  seed: number | null;
  node: string;
  package_version: string;
  machine: { cpus: number; cpu_model: string; total_mem_mib: number; platform: string; arch: string };
  started_at: string;
}

export function runInfo(seed: number | null = null): RunInfo {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string };
  const cpus = os.cpus();
  return {
    seed,
    node: process.version,
    package_version: pkg.version,
    machine: {
      cpus: cpus.length,
      cpu_model: cpus[0]?.model ?? "unknown",
      total_mem_mib: Math.round(os.totalmem() / 1048576),
      platform: os.platform(),
      arch: os.arch(),
    },
    started_at: new Date().toISOString(),
  };
}

/** Writes bench/results/<name>.json and returns its path. */
export function writeResult(name: string, result: object): string {
  const dir = path.join(repoRoot, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

/** A Markdown table of rows (columns from the first row unless given). */
export function markdownTable(rows: readonly Record<string, unknown>[], columns?: readonly string[]): string {
  if (rows.length === 0) return "(no rows)";
  const cols = columns ?? Object.keys(rows[0]!);
  const fmt = (v: unknown) =>
    typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : JSON.stringify(v ?? "");
  const lines = [`| ${cols.join(" | ")} |`, `| ${cols.map(() => "---").join(" | ")} |`];
  for (const r of rows) lines.push(`| ${cols.map((c) => fmt(r[c])).join(" | ")} |`);
  return lines.join("\n");
}

/** Percentile (nearest rank) of an unsorted sample; p in [0, 100]: the simulation's own. */
export { percentile } from "../../src/sim/index.js";
