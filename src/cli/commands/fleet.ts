import type { Command } from "../command.js";

// Not built yet (see the tracker): --help shows the planned flags; running it exits 2.
export const command: Command = {
  name: "fleet",
  summary: "dry run of fleet placement of model replicas onto clusters and pools",
  available: false,
  flags: {
    manifests: { type: "string", description: "manifests directory", value: "DIR" },
    output: { type: "string", default: "json", description: "output format", value: "json" },
    "no-fill": { type: "boolean", description: "retain existing replicas without placing new ones" },
  },
  run: async () => 2,
};
