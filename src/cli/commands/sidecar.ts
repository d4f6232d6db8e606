import type { Command } from "../command.js";

// Not built yet (see the tracker): --help shows the planned flags; running it exits 2.
export const command: Command = {
  name: "sidecar",
  summary:
    "scheduler API (gRPC + Connect + gRPC-Web + health on one port) and the Ollama/OpenAI-compatible proxy; state in NATS KV",
  available: false,
  flags: {
    listen: { type: "string", default: "127.0.0.1:50051", description: "API address", value: "HOST:PORT" },
    "proxy-listen": {
      type: "string",
      default: "127.0.0.1:11434",
      description: "Ollama/OpenAI proxy address",
      value: "HOST:PORT",
    },
    nats: { type: "string", env: "KUBEMOOT_NATS_URL", description: "NATS server URL", value: "URL" },
    state: {
      type: "string",
      default: "nats",
      description: "shared-state backend: memory or nats",
      value: "memory|nats",
    },
    agent: {
      type: "string",
      description: "this sidecar's agent (else KUBEMOOT_NAMESPACE + KUBEMOOT_AGENT_NAME)",
      value: "NAMESPACE/NAME",
    },
  },
  run: async () => 2,
};
