// `npm run bench -- <name> [<name> ...]` runs the named benchmarks (all when none is named).
// Each benchmark is a folder bench/<name>/ whose index exports `run(args: string[])`.
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

function available(): string[] {
  return readdirSync(here)
    .filter((d) => d !== "lib" && d !== "results" && statSync(path.join(here, d)).isDirectory())
    .filter((d) => existsSync(path.join(here, d, "index.js")))
    .sort();
}

async function main(argv: string[]): Promise<number> {
  const names = argv.filter((a) => !a.startsWith("-"));
  const all = available();
  const chosen = names.length > 0 ? names : all;
  for (const name of chosen) {
    if (!all.includes(name)) {
      process.stderr.write(`bench: unknown benchmark "${name}" (available: ${all.join(", ")})\n`);
      return 2;
    }
  }
  for (const name of chosen) {
    process.stdout.write(`\n## bench ${name}\n\n`);
    const mod = (await import(`./${name}/index.js`)) as { run(args: string[]): Promise<void> };
    await mod.run(argv.filter((a) => a.startsWith("-")));
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`bench: ${err?.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
