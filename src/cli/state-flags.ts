// The --state / --nats pair shared by the commands that open shared state, and the NATS
// connection's other settings (src/settings), whose files must exist.
import { existsSync } from "node:fs";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { type CommandName, readSetting, SETTINGS, type Setting } from "../settings/index.js";
import type { StateStoreOptions } from "../state/index.js";
import type { FlagSpec, FlagValues } from "./command.js";
import { settingFlags, settingFromFlag } from "./setting-flags.js";

/** --nats and --state (flag, variable, default). */
export function stateFlags(command: CommandName): Record<string, FlagSpec> {
  return settingFlags(command, SETTINGS.natsUrl, SETTINGS.state);
}

/** "memory", or the NATS URL(s) to connect to; throws a clear InvalidConfig otherwise. */
export function stateTarget(flags: FlagValues, hint = ""): "memory" | string {
  if (settingFromFlag(flags, SETTINGS.state) === "memory") return "memory";
  const nats = settingFromFlag(flags, SETTINGS.natsUrl);
  if (!nats) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `--state nats needs a NATS URL: set --nats or ${SETTINGS.natsUrl.name}${hint}`,
    );
  }
  return nats;
}

/**
 * NATS credentials file, TLS files (CA; client certificate + key for mutual TLS) and the KV
 * buckets' replicas (1, 3 or 5) and their key layout, from the environment; each file must exist.
 */
export function natsStateOptions(
  env: NodeJS.ProcessEnv = process.env,
): Pick<StateStoreOptions, "nats" | "replicas" | "keyLayout"> {
  const file = (s: Setting<string | undefined>): string | undefined => {
    const v = readSetting(env, s);
    if (v !== undefined && !existsSync(v)) {
      throw new KubemootError(ErrorCode.InvalidConfig, `${s.name}: no such file "${v}"`, { field: s.name });
    }
    return v;
  };
  const creds = file(SETTINGS.natsCreds);
  const caFile = file(SETTINGS.natsTlsCa);
  const certFile = file(SETTINGS.natsTlsCert);
  const keyFile = file(SETTINGS.natsTlsKey);
  if ((certFile === undefined) !== (keyFile === undefined)) {
    const [missing, other] =
      certFile === undefined
        ? [SETTINGS.natsTlsCert, SETTINGS.natsTlsKey]
        : [SETTINGS.natsTlsKey, SETTINGS.natsTlsCert];
    throw new KubemootError(ErrorCode.InvalidConfig, `${missing.name}: set together with ${other.name}`, {
      field: missing.name,
    });
  }
  const replicas = readSetting(env, SETTINGS.kvReplicas);
  const tls =
    caFile || certFile
      ? { ...(caFile ? { caFile } : {}), ...(certFile ? { certFile } : {}), ...(keyFile ? { keyFile } : {}) }
      : undefined;
  return {
    ...(creds || tls ? { nats: { ...(creds ? { credsFile: creds } : {}), ...(tls ? { tls } : {}) } } : {}),
    ...(replicas !== undefined ? { replicas } : {}),
    keyLayout: readSetting(env, SETTINGS.keyLayout),
  };
}
