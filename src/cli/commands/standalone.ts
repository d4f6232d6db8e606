// `kubemoot-scheduler standalone` (docs/design.md §2): operator, API and proxy in one process,
// started through the SidecarHost.
import path from "node:path";
import { pino } from "pino";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { SCHEDULER_SETTINGS, SETTINGS } from "../../settings/index.js";
import { type Command, MIN_PROBE_INTERVAL_MS, numberFlag } from "../command.js";
import { listenerFlags, listenerLimitsFromFlags, proxyMaxBodyBytesFromFlags } from "../listener-flags.js";
import { providerEndpointsFlag, schedulerConfigFromFlags } from "../scheduler-flags.js";
import { settingFlags, settingFromFlag } from "../setting-flags.js";
import { webLaunchFromFlags } from "../web-flags.js";

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
    ...settingFlags("standalone", SETTINGS.bindingsDir, SETTINGS.natsUrl),
    listen: { type: "string", default: "127.0.0.1:50051", description: "API address", value: "HOST:PORT" },
    "proxy-listen": {
      type: "string",
      default: "127.0.0.1:11434",
      description: "proxy address (empty: none)",
      value: "HOST:PORT",
    },
    agent: { type: "string", description: "default agent for calls that name none", value: "NAMESPACE/NAME" },
    "probe-interval-ms": { type: "string", default: "10000", description: "provider probe interval" },
    ...settingFlags(
      "standalone",
      SETTINGS.healthListen,
      SETTINGS.webListen,
      SETTINGS.webTokenFile,
      SETTINGS.webTraceUrl,
    ),
    ...listenerFlags("standalone"),
    ...providerEndpointsFlag("standalone"),
    ...settingFlags("standalone", SETTINGS.logLevel),
  },
  env: SCHEDULER_SETTINGS,
  async run(flags, _positionals, host) {
    const manifests = (flags.manifests as string[] | undefined) ?? [];
    if (manifests.length === 0) {
      throw new KubemootError(
        ErrorCode.InvalidConfig,
        "--manifests: required (a directory of Kubemoot manifests)",
      );
    }
    const logger = pino({
      level: settingFromFlag(flags, SETTINGS.logLevel),
      base: { component: "standalone" },
    });
    const config = schedulerConfigFromFlags(process.env, flags);
    const s = await host.startStandalone({
      manifests,
      bindingsDir: path.resolve(settingFromFlag(flags, SETTINGS.bindingsDir)),
      nats: settingFromFlag(flags, SETTINGS.natsUrl),
      listen: String(flags.listen),
      proxyListen: String(flags["proxy-listen"] ?? ""),
      healthListen: settingFromFlag(flags, SETTINGS.healthListen),
      limits: listenerLimitsFromFlags(flags),
      proxy: { maxBodyBytes: proxyMaxBodyBytesFromFlags(flags) },
      config,
      logger,
      probeIntervalMs: numberFlag(flags, "probe-interval-ms", MIN_PROBE_INTERVAL_MS),
      web: webLaunchFromFlags(flags),
    });
    process.stdout.write(
      `kubemoot-scheduler standalone: API on ${s.sidecar.api.address}${s.proxyAddress ? `, proxy on ${s.proxyAddress}` : ""}${s.webUrl ? `, web view on ${s.webUrl}` : ""} (${s.state.kind} store)\n`,
    );
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
    await s.close();
    return 0;
  },
};
