import path from "node:path";
import { pino } from "pino";
import { startStandalone } from "../../../sidecar/standalone.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { type Command, MIN_PROBE_INTERVAL_MS, numberFlag } from "../command.js";
import { LISTENER_FLAGS, listenerLimitsFromFlags, proxyMaxBodyBytesFromFlags } from "../listener-flags.js";
import { PROVIDER_ENDPOINTS_FLAG, schedulerConfigFromFlags } from "../scheduler-flags.js";

export const command: Command = {
  name: "standalone",
  summary: "operator + scheduler API + proxy in one process; embedded store unless --nats is given",
  details: `Reads and watches the manifests directory (Models, ModelProviders, Agents, policies), probes
the ModelProviders and publishes their state, binds the agents (binding files under
--bindings-dir), and serves the scheduler API and the Ollama/OpenAI proxy. With --nats the
same process uses NATS JetStream KV instead of the embedded store, with no other change.`,
  flags: {
    manifests: {
      type: "string",
      multiple: true,
      description: "manifests directory (or file); required",
      value: "DIR",
    },
    "bindings-dir": {
      type: "string",
      default: ".kubemoot",
      env: "KUBEMOOT_BINDINGS_DIR",
      description: "where binding files are written",
      value: "DIR",
    },
    nats: {
      type: "string",
      env: "KUBEMOOT_NATS_URL",
      description: "NATS URL(s); default: the embedded store",
      value: "URL",
    },
    listen: { type: "string", default: "127.0.0.1:50051", description: "API address", value: "HOST:PORT" },
    "proxy-listen": {
      type: "string",
      default: "127.0.0.1:11434",
      description: "proxy address (empty: none)",
      value: "HOST:PORT",
    },
    agent: { type: "string", description: "default agent for calls that name none", value: "NAMESPACE/NAME" },
    "probe-interval-ms": { type: "string", default: "10000", description: "provider probe interval" },
    "health-listen": {
      type: "string",
      default: "",
      env: "KUBEMOOT_HEALTH_LISTEN",
      description: "health-only port: gRPC health, /healthz, /readyz, /metrics (empty: none)",
      value: "HOST:PORT",
    },
    ...LISTENER_FLAGS,
    ...PROVIDER_ENDPOINTS_FLAG,
    "log-level": {
      type: "string",
      default: "info",
      env: "KUBEMOOT_LOG_LEVEL",
      description: "pino log level",
    },
  },
  async run(flags) {
    const manifests = (flags.manifests as string[] | undefined) ?? [];
    if (manifests.length === 0) {
      throw new KubemootError(
        ErrorCode.InvalidConfig,
        "--manifests: required (a directory of Kubemoot manifests)",
      );
    }
    const logger = pino({ level: String(flags["log-level"]), base: { component: "standalone" } });
    const config = schedulerConfigFromFlags(process.env, flags);
    const s = await startStandalone({
      manifests,
      bindingsDir: path.resolve(String(flags["bindings-dir"])),
      nats: typeof flags.nats === "string" ? flags.nats : "",
      listen: String(flags.listen),
      proxyListen: String(flags["proxy-listen"] ?? ""),
      healthListen: String(flags["health-listen"] ?? ""),
      limits: listenerLimitsFromFlags(flags),
      proxy: { maxBodyBytes: proxyMaxBodyBytesFromFlags(flags) },
      config,
      logger,
      probeIntervalMs: numberFlag(flags, "probe-interval-ms", MIN_PROBE_INTERVAL_MS),
    });
    process.stdout.write(
      `kubemoot-scheduler standalone: API on ${s.sidecar.api.address}${s.proxyAddress ? `, proxy on ${s.proxyAddress}` : ""} (${s.state.kind} store)\n`,
    );
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
    await s.close();
    return 0;
  },
};
