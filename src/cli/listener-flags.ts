// The connection limits of the sidecar's listening ports (API, health, proxy) and the proxy's
// body limit, as flags with environment variables (src/settings); shared by `sidecar` and
// `standalone`.
import { type ListenerLimits, resolveListenerLimits } from "../net/index.js";
import { type CommandName, SETTINGS } from "../settings/index.js";
import type { FlagSpec, FlagValues } from "./command.js";
import { settingFlags, settingFromFlag } from "./setting-flags.js";

const LIMITS = {
  maxConnections: SETTINGS.maxConnections,
  headersTimeoutMs: SETTINGS.headersTimeoutMs,
  requestTimeoutMs: SETTINGS.requestTimeoutMs,
  idleTimeoutMs: SETTINGS.idleTimeoutMs,
  maxStreams: SETTINGS.maxStreams,
} as const satisfies Record<keyof ListenerLimits, unknown>;

export function listenerFlags(command: CommandName): Record<string, FlagSpec> {
  return settingFlags(command, ...Object.values(LIMITS), SETTINGS.proxyMaxBodyBytes);
}

/** The limits the flags give (InvalidConfig naming the flag when one is not a number ≥ 1). */
export function listenerLimitsFromFlags(flags: FlagValues): ListenerLimits {
  const given: Partial<ListenerLimits> = {};
  for (const [key, s] of Object.entries(LIMITS))
    given[key as keyof ListenerLimits] = settingFromFlag(flags, s);
  return resolveListenerLimits(given);
}

export function proxyMaxBodyBytesFromFlags(flags: FlagValues): number {
  return settingFromFlag(flags, SETTINGS.proxyMaxBodyBytes);
}
