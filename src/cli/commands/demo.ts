import type { Command } from "../command.js";

// Not built yet (see the tracker): --help shows the planned flags; running it exits 2.
export const command: Command = {
  name: "demo",
  summary: "standalone + an emulated GPU fleet + synthetic crew traffic, with a live view",
  available: false,
  flags: {
    duration: {
      type: "string",
      default: "0",
      description: "stop after this many seconds (0 = until Ctrl-C)",
      value: "SECONDS",
    },
    seed: { type: "string", default: "1", description: "random seed of the synthetic traffic", value: "N" },
    speed: { type: "string", default: "1", description: "time scale of the emulated GPUs", value: "X" },
  },
  run: async () => 2,
};
