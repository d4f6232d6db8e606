import type { Command } from "../command.js";

// Not built yet (see the tracker): --help shows the planned flags; running it exits 2.
export const command: Command = {
  name: "standalone",
  summary: "operator + scheduler API + proxy in one process; embedded store unless --nats is given",
  available: false,
  flags: {
    manifests: { type: "string", description: "manifests directory", value: "DIR" },
    nats: {
      type: "string",
      env: "KUBEMOOT_NATS_URL",
      description: "NATS server URL (default: the embedded store)",
      value: "URL",
    },
  },
  run: async () => 2,
};
