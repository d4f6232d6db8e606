// The dispatcher of `kubemoot-scheduler <command>` (docs/design.md §2): the usage, --help, and
// KubemootErrors as a message and exit status 2.
import { readFileSync } from "node:fs";
import path from "node:path";
import { pino } from "pino";
import { KubemootError } from "../errors/index.js";
import { redactSecrets } from "../log/index.js";
import { repoRoot } from "../repo-root.js";
import { startTracing } from "../tracing/index.js";
import { parseFlags, renderHelp } from "./command.js";
import { commandLoaders } from "./commands/index.js";
import type { SidecarHost } from "./host.js";

const USAGE = `Usage: kubemoot-scheduler <command> [flags]

Commands:
  sidecar      scheduler API (gRPC, Connect, gRPC-Web, health) and the Ollama/OpenAI proxy
  operator     provider prober/publisher and agent binder
  standalone   operator + scheduler API + proxy in one process
  demo         standalone + emulated GPUs + synthetic crews, with a live view (npm start)
  emulate      an Ollama-API emulator over a simulated GPU
  bind         dry run of the binder: manifests in, bindings as JSON
  simulate     discrete-event simulation of scheduling policies
  fleet        dry run of fleet placement of model replicas
  topology     dry run of topology sources, profiles and gang admission
  gguf         write a seeded llama-architecture GGUF model for a real llama.cpp
  engine       a real llama.cpp server (node-llama-cpp) serving a directory of .gguf models

Run 'kubemoot-scheduler <command> --help' for a command's flags.`;

/** The commands that run until stopped: they may export traces. */
const LONG_RUNNING = new Set(["sidecar", "operator", "standalone", "demo", "emulate", "engine"]);

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(repoRoot(), "package.json"), "utf8")) as { version: string })
      .version;
  } catch {
    return "unknown";
  }
}

/** Runs one command; `host` starts the sidecar's processes (bin/kubemoot-scheduler.js passes sidecar/'s). */
export async function main(argv: string[], host: SidecarHost): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(`${USAGE}\n`);
    return name ? 0 : 2;
  }
  const load = commandLoaders[name];
  if (!load) {
    process.stderr.write(`kubemoot-scheduler: unknown command "${name}"\n\n${USAGE}\n`);
    return 2;
  }
  const cmd = await load();
  try {
    const { values, positionals, help } = parseFlags(cmd, rest);
    if (help) {
      process.stdout.write(`${renderHelp(cmd)}\n`);
      return 0;
    }
    // Long-running commands honour the OTEL_* variables (docs/tracing.md); off without an endpoint.
    const tracing = LONG_RUNNING.has(name)
      ? await startTracing(
          name,
          packageVersion(),
          pino({ base: { component: "tracing" } }, pino.destination(2)),
        )
      : undefined;
    try {
      return await cmd.run(values, positionals, host);
    } finally {
      await tracing?.shutdown();
    }
  } catch (err) {
    if (KubemootError.is(err)) {
      // A message may quote a flag's value (a URL with credentials): never print a secret.
      process.stderr.write(`kubemoot-scheduler ${name}: ${redactSecrets(err.message)}\n`);
      return 2;
    }
    throw err;
  }
}
