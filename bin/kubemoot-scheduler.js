#!/usr/bin/env node
// Entry point; the TypeScript is compiled to dist/ by `npm install` (prepare) or `npm run build`.
import { main } from "../dist/src/cli/main.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`kubemoot-scheduler: ${err?.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
