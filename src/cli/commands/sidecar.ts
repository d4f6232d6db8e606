import { pino } from "pino";
import { startSidecar } from "../../../sidecar/main.js";
import { PROVIDER_FLAG_SYNTAX, parseProviderFlag } from "../../../sidecar/providers-flag.js";
import { proxyExtra } from "../../../sidecar/with-proxy.js";
import { type Command, MIN_PROBE_INTERVAL_MS, numberFlag } from "../command.js";
import { LISTENER_FLAGS, listenerLimitsFromFlags, proxyMaxBodyBytesFromFlags } from "../listener-flags.js";
import { PROVIDER_ENDPOINTS_FLAG, schedulerConfigFromFlags } from "../scheduler-flags.js";
import { natsStateOptions, stateTarget } from "../state-flags.js";

export const command: Command = {
  name: "sidecar",
  summary:
    "scheduler API (gRPC + Connect + gRPC-Web + health on one port), an optional health-only port, and the Ollama/OpenAI-compatible proxy; state in NATS KV",
  details: `Scheduling settings come from the environment (see the README's configuration table):
KUBEMOOT_MODEL_CANDIDATES_MULLING / _TRIAGE, KUBEMOOT_MODEL_CANDIDATE_TOLERANCE (10),
KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS (90), KUBEMOOT_TICKET_LEASE_SECONDS (150),
KUBEMOOT_MODEL_MODEL + KUBEMOOT_MODEL_ENDPOINT and KUBEMOOT_TRIAGE_MODEL_MODEL_ID +
KUBEMOOT_TRIAGE_MODEL_ENDPOINT (static bindings for calls that cannot wait), KUBEMOOT_CREW,
KUBEMOOT_POLICY (time: by expected seconds to finish; or kubemoot: Kubemoot's weighted cost),
KUBEMOOT_COST_WEIGHTS (the kubemoot policy's weights), KUBEMOOT_PROVIDER_ENDPOINTS (the
endpoint allowlist; empty: every endpoint, with a warning at start).
SIGTERM/SIGINT: readiness goes NOT_SERVING, in-flight calls finish, tickets are released, exit 0.`,
  flags: {
    listen: { type: "string", default: "127.0.0.1:50051", description: "API address", value: "HOST:PORT" },
    "health-listen": {
      type: "string",
      default: "",
      env: "KUBEMOOT_HEALTH_LISTEN",
      description: "health-only port: gRPC health, /healthz, /readyz, /metrics (empty: none)",
      value: "HOST:PORT",
    },
    "proxy-listen": {
      type: "string",
      default: "127.0.0.1:11434",
      description: "Ollama/OpenAI proxy address (empty disables the proxy)",
      value: "HOST:PORT",
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
      description: "shared-state backend: nats, or memory (embedded; with --provider)",
      value: "memory|nats",
    },
    agent: {
      type: "string",
      description:
        "this sidecar's agent (else KUBEMOOT_NAMESPACE + KUBEMOOT_AGENT_NAME); it serves only this agent and its tickets, none = every agent",
      value: "NAMESPACE/NAME",
    },
    provider: {
      type: "string",
      multiple: true,
      description: "probe and publish this provider from this process (when no operator does)",
      value: PROVIDER_FLAG_SYNTAX,
    },
    "probe-interval-ms": {
      type: "string",
      default: "10000",
      description: "probe interval of --provider providers",
    },
    "drain-seconds": {
      type: "string",
      default: "20",
      description: "longest wait for in-flight calls at shutdown",
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
    const target = stateTarget(flags, " (or use --state memory with --provider)");
    const config = schedulerConfigFromFlags(process.env, flags);
    const providers = ((flags.provider as string[] | undefined) ?? []).map(parseProviderFlag);
    const probeIntervalMs = numberFlag(flags, "probe-interval-ms", MIN_PROBE_INTERVAL_MS);
    const drainMs = numberFlag(flags, "drain-seconds", 0) * 1000;
    const logger = pino({ level: String(flags["log-level"]), base: { component: "sidecar" } });
    const proxyListen = String(flags["proxy-listen"] ?? "");
    const limits = listenerLimitsFromFlags(flags);
    const maxBodyBytes = proxyMaxBodyBytesFromFlags(flags);
    let proxyAddress = "";
    const sidecar = await startSidecar({
      listen: String(flags.listen),
      healthListen: String(flags["health-listen"] ?? ""),
      limits,
      state: target,
      config,
      logger,
      providers,
      probeIntervalMs,
      drainMs,
      stateOptions: natsStateOptions(),
      ...(proxyListen
        ? {
            extras: proxyExtra(
              proxyListen,
              { maxBodyBytes },
              (a) => {
                proxyAddress = a;
              },
              limits,
            ),
          }
        : {}),
    });
    process.stdout.write(
      `kubemoot-scheduler sidecar: API on ${sidecar.api.address}${sidecar.api.healthAddress ? `, health on ${sidecar.api.healthAddress}` : ""}${proxyAddress ? `, proxy on ${proxyAddress}` : ""}\n`,
    );
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    });
    await sidecar.close();
    return 0;
  },
};
