import path from "node:path";
import { pino } from "pino";
import { startOperator } from "../../operator/index.js";
import { openStateStore } from "../../state/index.js";
import { type Command, MIN_PROBE_INTERVAL_MS, numberFlag } from "../command.js";
import { stateTarget } from "../state-flags.js";

export const command: Command = {
  name: "operator",
  summary: "provider prober/publisher and agent binder; reads CRDs from Kubernetes, or a manifests directory",
  details: `With --manifests, the directory is read and watched; bindings (each agent's env,
candidate lists and status) are written under --bindings-dir. Without it, the operator reads
the kubemoot.ai CRDs from Kubernetes (KUBECONFIG, ~/.kube/config, or in-cluster) and patches
Agent status, agent Deployments' env and ModelProvider status, and posts FailedScheduling
events. In both modes it probes every ModelProvider and publishes kubemoot_provider_state.`,
  available: true,
  flags: {
    manifests: {
      type: "string",
      multiple: true,
      description: "read manifests from this directory (or file) instead of Kubernetes",
      value: "DIR",
    },
    "bindings-dir": {
      type: "string",
      default: ".kubemoot",
      env: "KUBEMOOT_BINDINGS_DIR",
      description: "where binding files are written in manifests mode",
      value: "DIR",
    },
    nats: {
      type: "string",
      env: "KUBEMOOT_NATS_URL",
      description: "NATS server URL(s), comma-separated",
      value: "URL",
    },
    state: {
      type: "string",
      default: "nats",
      env: "KUBEMOOT_STATE",
      description: "shared-state backend: nats, or memory (only useful in one process)",
      value: "memory|nats",
    },
    "probe-interval-ms": { type: "string", default: "10000", description: "provider probe interval" },
    "log-level": {
      type: "string",
      default: "info",
      env: "KUBEMOOT_LOG_LEVEL",
      description: "pino log level",
    },
  },
  async run(flags) {
    const target = stateTarget(flags);
    const probeIntervalMs = numberFlag(flags, "probe-interval-ms", MIN_PROBE_INTERVAL_MS);
    const logger = pino({ level: String(flags["log-level"]), base: { component: "operator" } });
    const state = await openStateStore(target === "memory" ? "memory" : target.split(","), { logger });
    const op = await startOperator({
      manifests: (flags.manifests as string[] | undefined) ?? [],
      bindingsDir: path.resolve(String(flags["bindings-dir"])),
      state,
      logger,
      probeIntervalMs,
    });
    process.stdout.write("kubemoot-scheduler operator: running\n");
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
    await op.stop();
    await state.close();
    return 0;
  },
};
