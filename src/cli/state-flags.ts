// The --state / --nats pair shared by the commands that open shared state.
import { existsSync } from "node:fs";
import { ErrorCode, KubemootError } from "../errors/index.js";
import type { StateStoreOptions } from "../state/index.js";
import type { FlagValues } from "./command.js";

/** "memory", or the NATS URL(s) to connect to; throws a clear InvalidConfig otherwise. */
export function stateTarget(flags: FlagValues, hint = ""): "memory" | string {
  const kind = String(flags.state);
  if (kind !== "memory" && kind !== "nats") {
    throw new KubemootError(ErrorCode.InvalidConfig, `--state: expected memory or nats, got "${kind}"`);
  }
  if (kind === "memory") return "memory";
  const nats = typeof flags.nats === "string" ? flags.nats.trim() : "";
  if (!nats) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `--state nats needs a NATS URL: set --nats or KUBEMOOT_NATS_URL${hint}`,
    );
  }
  return nats;
}

/** The environment variables of the NATS connection beyond its URL (the chart sets them). */
export const NATS_ENV = {
  creds: "KUBEMOOT_NATS_CREDS",
  tlsCa: "KUBEMOOT_NATS_TLS_CA",
  tlsCert: "KUBEMOOT_NATS_TLS_CERT",
  tlsKey: "KUBEMOOT_NATS_TLS_KEY",
  replicas: "KUBEMOOT_KV_REPLICAS",
} as const;

/**
 * NATS credentials file, TLS files (CA; client certificate + key for mutual TLS) and the KV
 * buckets' replicas (1, 3 or 5), from the environment; each file must exist.
 */
export function natsStateOptions(
  env: NodeJS.ProcessEnv = process.env,
): Pick<StateStoreOptions, "nats" | "replicas"> {
  const file = (name: string): string | undefined => {
    const v = env[name]?.trim();
    if (!v) return undefined;
    if (!existsSync(v))
      throw new KubemootError(ErrorCode.InvalidConfig, `${name}: no such file "${v}"`, { field: name });
    return v;
  };
  const creds = file(NATS_ENV.creds);
  const caFile = file(NATS_ENV.tlsCa);
  const certFile = file(NATS_ENV.tlsCert);
  const keyFile = file(NATS_ENV.tlsKey);
  if ((certFile === undefined) !== (keyFile === undefined)) {
    const missing = certFile === undefined ? NATS_ENV.tlsCert : NATS_ENV.tlsKey;
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `${missing}: set together with ${certFile === undefined ? NATS_ENV.tlsKey : NATS_ENV.tlsCert}`,
      { field: missing },
    );
  }
  const rawReplicas = env[NATS_ENV.replicas]?.trim();
  let replicas: number | undefined;
  if (rawReplicas) {
    replicas = Number(rawReplicas);
    if (![1, 3, 5].includes(replicas)) {
      throw new KubemootError(
        ErrorCode.InvalidConfig,
        `${NATS_ENV.replicas}: expected 1, 3 or 5, got "${rawReplicas}"`,
        { field: NATS_ENV.replicas },
      );
    }
  }
  const tls =
    caFile || certFile
      ? { ...(caFile ? { caFile } : {}), ...(certFile ? { certFile } : {}), ...(keyFile ? { keyFile } : {}) }
      : undefined;
  return {
    ...(creds || tls ? { nats: { ...(creds ? { credsFile: creds } : {}), ...(tls ? { tls } : {}) } } : {}),
    ...(replicas !== undefined ? { replicas } : {}),
  };
}
