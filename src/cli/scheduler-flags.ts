// The scheduler's settings as `sidecar` and `standalone` take them: the environment
// (src/scheduler/config.ts, through src/settings) with --agent and --provider-endpoints
// winning over it.

import { parseEndpointAllowlist } from "../net/index.js";
import { type SchedulerConfig, schedulerConfigFromEnv } from "../scheduler/index.js";
import { type CommandName, SETTINGS } from "../settings/index.js";
import type { FlagSpec, FlagValues } from "./command.js";
import { givenFlag, overridingFlag } from "./setting-flags.js";

export function providerEndpointsFlag(command: CommandName): Record<string, FlagSpec> {
  return overridingFlag(command, SETTINGS.providerEndpoints);
}

/** Reads and validates the scheduler's configuration from the environment and the flags. */
export function schedulerConfigFromFlags(env: NodeJS.ProcessEnv, flags: FlagValues): SchedulerConfig {
  const config = schedulerConfigFromEnv(env, typeof flags.agent === "string" ? flags.agent : undefined);
  const given = givenFlag(flags, SETTINGS.providerEndpoints);
  if (given !== undefined) {
    config.providerEndpoints = parseEndpointAllowlist(given, `--${SETTINGS.providerEndpoints.flag}`);
  }
  return config;
}
