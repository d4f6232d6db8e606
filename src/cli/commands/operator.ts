import type { Command } from "../command.js";

// Not built yet (see the tracker): --help shows the planned flags; running it exits 2.
export const command: Command = {
  name: "operator",
  summary: "provider prober/publisher and agent binder; reads CRDs from Kubernetes or a manifests directory",
  available: false,
  flags: {
    manifests: {
      type: "string",
      description: "read manifests from this directory instead of Kubernetes",
      value: "DIR",
    },
    nats: { type: "string", env: "KUBEMOOT_NATS_URL", description: "NATS server URL", value: "URL" },
    state: {
      type: "string",
      default: "nats",
      description: "shared-state backend: memory or nats",
      value: "memory|nats",
    },
  },
  run: async () => 2,
};
