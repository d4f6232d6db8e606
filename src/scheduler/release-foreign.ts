// Releasing a ticket this process did not claim, by id (docs/rules/identity.md): only one its
// agent holds (a restarted sidecar ends its predecessor's tickets); another agent's is left
// alone. A sidecar without an agent may release any.
import { holderAgent } from "../state/index.js";
import type { SchedulerStore } from "./store.js";
import type { SchedulerHooks } from "./types.js";

export async function releaseForeign(
  state: SchedulerStore,
  agent: string,
  ticketId: string,
  log: SchedulerHooks["log"],
): Promise<boolean> {
  const t = await state.tickets.find(ticketId);
  if (t === undefined) return false;
  const { provider } = t;
  if (agent !== "" && holderAgent(t.holderId) !== agent) {
    log?.("warn", "release of another agent's ticket refused", { provider, ticketId });
    return false;
  }
  await state.tickets.release({ provider, ticketId, holderId: t.holderId });
  return true;
}
