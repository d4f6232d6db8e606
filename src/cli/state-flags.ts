// The --state / --nats pair shared by the commands that open shared state.
import { ErrorCode, KubemootError } from "../errors/index.js";
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
