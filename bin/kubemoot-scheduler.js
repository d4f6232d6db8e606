#!/usr/bin/env node
import { sidecarHost } from "../dist/sidecar/cli-host.js";
// Entry point and composition root; the TypeScript is compiled to dist/ by `npm install`
// (prepare) or `npm run build`. The CLI (src/cli) starts sidecars through the host that
// sidecar/ provides, so src/ never imports sidecar/.
import { main } from "../dist/src/cli/index.js";

main(process.argv.slice(2), sidecarHost).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`kubemoot-scheduler: ${err?.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
