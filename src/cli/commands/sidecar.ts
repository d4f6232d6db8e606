// `kubemoot-scheduler sidecar` (docs/design.md §2): the scheduler API, the proxy and the
// optional health port of one agent's sidecar, started through the SidecarHost. Start-up
// (docs/deploy.md "Start-up and readiness"): the API and health ports listen, not ready, while
// the shared state opens with retries; a configuration error exits 2, SIGTERM or SIGINT at any
// point exits 0.
import { pino } from "pino";
import { NATS_SETTINGS, SCHEDULER_SETTINGS, SETTINGS } from "../../settings/index.js";
import { type Command, MIN_PROBE_INTERVAL_MS, numberFlag } from "../command.js";
import { listenerFlags, listenerLimitsFromFlags, proxyMaxBodyBytesFromFlags } from "../listener-flags.js";
import { PROVIDER_FLAG_SYNTAX, parseProviderFlag } from "../providers-flag.js";
import { providerEndpointsFlag, schedulerConfigFromFlags } from "../scheduler-flags.js";
import { settingFlags, settingFromFlag } from "../setting-flags.js";
import { natsStateOptions, stateFlags, stateTarget } from "../state-flags.js";

export const command: Command = {
  name: "sidecar",
  summary:
    "scheduler API (gRPC + Connect + gRPC-Web + health on one port), an optional health-only port, and the Ollama/OpenAI-compatible proxy; state in NATS KV",
  details: `Scheduling settings come from the environment (listed below; docs/settings.md has them all).
Start-up: the API and health ports listen first, not ready (gRPC health NOT_SERVING, /readyz 503,
RPCs UNAVAILABLE), while the shared state opens; an unreachable NATS or a slow first snapshot is
retried with backoff (one warning per attempt), and the proxy starts once the state is open.
SIGTERM/SIGINT: readiness goes NOT_SERVING, in-flight calls finish, tickets are released, exit 0.`,
  flags: {
    listen: { type: "string", default: "127.0.0.1:50051", description: "API address", value: "HOST:PORT" },
    ...settingFlags("sidecar", SETTINGS.healthListen),
    "proxy-listen": {
      type: "string",
      default: "127.0.0.1:11434",
      description: "Ollama/OpenAI proxy address (empty disables the proxy)",
      value: "HOST:PORT",
    },
    ...stateFlags("sidecar"),
    agent: {
      type: "string",
      description: `this sidecar's agent (else ${SETTINGS.namespace.name} + ${SETTINGS.agentName.name}); it serves only this agent and its tickets, none = every agent`,
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
    ...listenerFlags("sidecar"),
    ...providerEndpointsFlag("sidecar"),
    ...settingFlags("sidecar", SETTINGS.logLevel),
  },
  env: [...SCHEDULER_SETTINGS, ...NATS_SETTINGS],
  async run(flags, _positionals, host) {
    const target = stateTarget(flags, " (or use --state memory with --provider)");
    const config = schedulerConfigFromFlags(process.env, flags);
    const providers = ((flags.provider as string[] | undefined) ?? []).map(parseProviderFlag);
    const probeIntervalMs = numberFlag(flags, "probe-interval-ms", MIN_PROBE_INTERVAL_MS);
    const drainMs = numberFlag(flags, "drain-seconds", 0) * 1000;
    const stateOptions = natsStateOptions();
    const logger = pino({
      level: settingFromFlag(flags, SETTINGS.logLevel),
      base: { component: "sidecar" },
    });
    // Handled from the start: a signal while the shared state is still opening ends the start.
    const stopping = new AbortController();
    const stop = () => stopping.abort(new Error("stopped by a signal"));
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    const write = (line: string) => process.stdout.write(`kubemoot-scheduler sidecar: ${line}\n`);
    try {
      let sidecar: Awaited<ReturnType<typeof host.startSidecar>>;
      try {
        sidecar = await host.startSidecar({
          listen: String(flags.listen),
          healthListen: settingFromFlag(flags, SETTINGS.healthListen),
          proxyListen: String(flags["proxy-listen"] ?? ""),
          proxy: { maxBodyBytes: proxyMaxBodyBytesFromFlags(flags) },
          limits: listenerLimitsFromFlags(flags),
          state: target,
          stateOptions,
          config,
          logger,
          providers,
          probeIntervalMs,
          drainMs,
          signal: stopping.signal,
          onListening: (api) =>
            write(
              `starting, API listening on ${api.address}${api.healthAddress ? `, health listening on ${api.healthAddress}` : ""}; not ready until the shared state is open`,
            ),
        });
      } catch (err) {
        if (stopping.signal.aborted) {
          write("stopped before the shared state was open");
          return 0;
        }
        throw err;
      }
      const { address, healthAddress } = sidecar.api;
      write(
        `API on ${address}${healthAddress ? `, health on ${healthAddress}` : ""}${sidecar.proxyAddress ? `, proxy on ${sidecar.proxyAddress}` : ""}`,
      );
      if (!stopping.signal.aborted) {
        await new Promise((resolve) => stopping.signal.addEventListener("abort", resolve, { once: true }));
      }
      await sidecar.close();
      return 0;
    } finally {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
    }
  },
};
