// Who holds a ticket: its holderId is "<agent>@<pid>" for a sidecar started for an agent
// ("namespace/name", which has no "@"), so the agent survives a restart of its sidecar
// (docs/rules/identity.md). Other holders (a sidecar without an agent, the operator, Kubemoot's
// own processes) hold no agent's tickets.

/** The holderId a sidecar of `agent` writes into its tickets. */
export function agentHolderId(agent: string, pid: number): string {
  return `${agent}@${pid}`;
}

/** The agent a ticket's holderId names; "" when it names none. */
export function holderAgent(holderId: string): string {
  const at = holderId.lastIndexOf("@");
  return at > 0 ? holderId.slice(0, at) : "";
}
