// The subcommands of `kubemoot-scheduler`, loaded lazily so that one command's dependencies
// never slow another's start.
import type { Command } from "../command.js";

export const commandLoaders: Record<string, () => Promise<Command>> = {
  sidecar: async () => (await import("./sidecar.js")).command,
  operator: async () => (await import("./operator.js")).command,
  standalone: async () => (await import("./standalone.js")).command,
  demo: async () => (await import("./demo.js")).command,
  emulate: async () => (await import("./emulate.js")).command,
  bind: async () => (await import("./bind.js")).command,
  simulate: async () => (await import("./simulate.js")).command,
  fleet: async () => (await import("./fleet.js")).command,
  topology: async () => (await import("./topology.js")).command,
  gguf: async () => (await import("./gguf.js")).command,
  engine: async () => (await import("./engine.js")).command,
};
