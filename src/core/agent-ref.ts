// An agent's reference, "namespace/name" (docs/rules/identity.md): its parts, for keys and
// records that are scoped by namespace.

/** The namespace of an agent ("namespace/name"); "" for an agent without one. */
export function agentNamespace(agent: string): string {
  const i = agent.indexOf("/");
  return i > 0 ? agent.slice(0, i) : "";
}

/** The name of an agent ("namespace/name"); the whole reference without a namespace. */
export function agentName(agent: string): string {
  const i = agent.indexOf("/");
  return i > 0 ? agent.slice(i + 1) : agent;
}
