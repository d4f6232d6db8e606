import type { Command } from "../command.js";

// Not built yet (see the tracker): --help shows the planned flags; running it exits 2.
export const command: Command = {
  name: "topology",
  summary: "dry run of topology sources, hierarchy profiles and gang admission",
  available: false,
  flags: {
    manifests: { type: "string", description: "manifests directory", value: "DIR" },
    output: { type: "string", default: "json", description: "output format", value: "json" },
    emit: { type: "string", description: "render objects for another system: kueue", value: "kueue" },
  },
  run: async () => 2,
};
