// The scheduler's settings as `sidecar` and `standalone` take them: the environment
// (src/scheduler/config.ts) with --agent and --provider-endpoints winning over it.

import { parseEndpointAllowlist } from "../net/index.js";
import { type SchedulerConfig, schedulerConfigFromEnv } from "../scheduler/index.js";
import type { FlagSpec, FlagValues } from "./command.js";

export const PROVIDER_ENDPOINTS_FLAG: Record<string, FlagSpec> = {
  "provider-endpoints": {
    type: "string",
    description:
      "endpoints provider states may name: host[:port] patterns (* in the host) or CIDRs, comma-separated; empty: all (else KUBEMOOT_PROVIDER_ENDPOINTS)",
    value: "LIST",
  },
};

/** Reads and validates the scheduler's configuration from the environment and the flags. */
export function schedulerConfigFromFlags(env: NodeJS.ProcessEnv, flags: FlagValues): SchedulerConfig {
  const config = schedulerConfigFromEnv(env, typeof flags.agent === "string" ? flags.agent : undefined);
  if (typeof flags["provider-endpoints"] === "string") {
    config.providerEndpoints = parseEndpointAllowlist(flags["provider-endpoints"], "--provider-endpoints");
  }
  return config;
}
