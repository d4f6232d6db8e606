// Key layouts of kubemoot_provider_tickets and kubemoot_model_demand (docs/rules/state.md §2.2,
// §2.3, §2.4). Two layouts, one interface:
// - `scoped` (the default): kind, provider and (for tickets and demand) namespace are key tokens
//   of their own, so a watch can follow one provider (`*.<provider>.>`) and a NATS permission
//   can hold a namespace to its own keys;
// - `kubemoot`: Kubemoot's own keys (`<provider>__<ticketId>` ...), to share buckets with its
//   runtime; one token per key, so nothing narrows a watch or a permission.
import { agentName, agentNamespace, kvToken, kvUntoken } from "../core/index.js";
import { invalidArgument } from "../errors/index.js";
import { holderAgent } from "./ticket-holder.js";

export type KeyLayoutName = "scoped" | "kubemoot";
export const KEY_LAYOUTS: readonly KeyLayoutName[] = ["scoped", "kubemoot"];

export type TicketsKey =
  | { kind: "ticket"; provider: string; ticketId: string }
  | { kind: "residency"; provider: string; modelToken: string }
  | { kind: "guard"; provider: string }
  | { kind: "suspect"; provider: string }
  | { kind: "conversation"; provider: string; key: string }
  | { kind: "foreign" };

/** Names one ticket; `holderId` places it in its holder's namespace (default: this process's). */
export interface TicketKeyRef {
  provider: string;
  ticketId: string;
  holderId?: string;
}

/** The keys of one layout, for the process whose tickets name `holderId`. */
export interface KeyLayout {
  readonly name: KeyLayoutName;
  /**
   * Whether provider-state writers keep offer keys (`_o.<provider>`, provider-offers.ts) beside
   * the states, so that a sidecar can follow its candidates' providers' states only.
   */
  readonly providerOffers: boolean;
  ticket(ref: TicketKeyRef): string;
  residency(provider: string, model: string): string;
  guard(provider: string): string;
  suspect(provider: string): string;
  /** Where `agent`'s conversation `key` (opaque, [A-Za-z0-9_-]) last ran: on `provider`. */
  conversation(provider: string, agent: string, key: string): string;
  parse(key: string): TicketsKey;
  /** The provider a tickets-bucket key belongs to (the copies' per-provider index). */
  providerOf(key: string): string | undefined;
  /** A watch filter matching exactly one provider's keys; undefined when the layout has none. */
  providerFilter(provider: string): string | undefined;
  /** A filter matching a ticket by id on any provider; undefined when the layout has none. */
  ticketByIdFilter(ticketId: string): string | undefined;
  wait(model: string, agent: string): string;
  intent(model: string, agent: string): string;
  /** The use-rate key `agent` bumps: one per model (kubemoot), one per model and namespace (scoped). */
  use(model: string, agent: string): string;
  sel(crew: string, agent: string): string;
  /**
   * A demand-bucket filter matching exactly one model's wait, intent and use keys; undefined
   * when the layout has none. It may also match selection keys (`sel.<ns>...` whose namespace
   * token equals the model's): readers take those from the `selFilter` copy only.
   */
  modelFilter(model: string): string | undefined;
  /** A demand-bucket filter matching every selection key; undefined when the layout has none. */
  selFilter(): string | undefined;
  /** A waiting call's record (docs/rules/fairness.md §3): `id` is the call's own ([A-Za-z0-9_-]). */
  queue(model: string, agent: string, id: string): string;
  /** One process's (`instance`, [A-Za-z0-9_-]) service counter of `crew` (docs/rules/fairness.md §4). */
  service(crew: string, agent: string, instance: string): string;
  /** A demand-bucket filter matching every service counter; undefined when the layout has none. */
  serviceFilter(): string | undefined;
}

const OPAQUE_ID = /^[A-Za-z0-9_-]{1,64}$/;

function opaqueId(field: string, id: string): string {
  if (!OPAQUE_ID.test(id)) throw invalidArgument(field, "is not an opaque id");
  return id;
}

function conversationKey(key: string): string {
  if (!CONVERSATION_KEY.test(key)) throw invalidArgument("conversation", "is not a conversation key");
  return key;
}

/** Provider names become part of keys: Kubernetes names (letters, digits, `-`, `.`) pass. */
export function assertProviderName(provider: string, field = "provider"): void {
  if (!/^[A-Za-z0-9][-A-Za-z0-9.]*$/.test(provider) || provider.endsWith(".")) {
    throw invalidArgument(field, `"${provider}" is not a valid provider name`);
  }
}

export function keyLayout(name: KeyLayoutName, holderId = ""): KeyLayout {
  return name === "kubemoot" ? kubemootLayout : scopedLayout(holderId);
}

// ---- kubemoot: Kubemoot's keys byte for byte (docs/rules/state.md §2.2) ----

const RESIDENCY_PREFIX = "residency__";
/** `_claim__<provider>`: starts with `_`, which no Kubernetes name does, so no Kubemoot scan sees it. */
const GUARD_PREFIX = "_claim__";
const SUSPECT_PREFIX = "_suspect__";
const CONVERSATION_PREFIX = "_conv__";
/** A conversation key: a hash in base64url, never a token separator or a wildcard. */
const CONVERSATION_KEY = /^[A-Za-z0-9_-]{8,64}$/;

function parseKubemoot(key: string): TicketsKey {
  if (key.startsWith(GUARD_PREFIX)) {
    const provider = key.slice(GUARD_PREFIX.length);
    return provider === "" ? { kind: "foreign" } : { kind: "guard", provider };
  }
  if (key.startsWith(SUSPECT_PREFIX)) {
    const provider = key.slice(SUSPECT_PREFIX.length);
    return provider === "" ? { kind: "foreign" } : { kind: "suspect", provider };
  }
  if (key.startsWith(CONVERSATION_PREFIX)) {
    const rest = key.slice(CONVERSATION_PREFIX.length);
    const i = rest.lastIndexOf("__");
    const id = rest.slice(i + 2);
    return i > 0 && CONVERSATION_KEY.test(id)
      ? { kind: "conversation", provider: rest.slice(0, i), key: id }
      : { kind: "foreign" };
  }
  if (key.startsWith("_")) return { kind: "foreign" };
  if (key.startsWith(RESIDENCY_PREFIX)) {
    const rest = key.slice(RESIDENCY_PREFIX.length);
    const i = rest.indexOf("__");
    if (i > 0 && i + 2 < rest.length) {
      return { kind: "residency", provider: rest.slice(0, i), modelToken: rest.slice(i + 2) };
    }
    // `residency__<uuid>` is a ticket of a provider named "residency": fall through.
  }
  const i = key.indexOf("__");
  if (i <= 0) return { kind: "foreign" };
  const ticketId = key.slice(i + 2);
  if (ticketId === "" || ticketId.includes("__")) return { kind: "foreign" };
  return { kind: "ticket", provider: key.slice(0, i), ticketId };
}

const kubemootLayout: KeyLayout = {
  name: "kubemoot",
  providerOffers: false,
  ticket: (r) => `${r.provider}__${r.ticketId}`,
  residency: (provider, model) => `${RESIDENCY_PREFIX}${provider}__${kvToken(model)}`,
  guard: (provider) => `${GUARD_PREFIX}${provider}`,
  suspect: (provider) => `${SUSPECT_PREFIX}${provider}`,
  conversation: (provider, _agent, key) => `${CONVERSATION_PREFIX}${provider}__${conversationKey(key)}`,
  parse: parseKubemoot,
  providerOf: (key) => {
    const k = parseKubemoot(key);
    return k.kind === "foreign" ? undefined : k.provider;
  },
  providerFilter: () => undefined,
  ticketByIdFilter: () => undefined,
  wait: (model, agent) => `wait.${kvToken(model)}.${kvToken(agent)}`,
  intent: (model, agent) => `intent.${kvToken(model)}.${kvToken(agent)}`,
  use: (model) => `use.${kvToken(model)}`,
  sel: (crew, agent) => `sel.${kvToken(crew)}.${kvToken(agent)}`,
  modelFilter: () => undefined,
  selFilter: () => undefined,
  queue: (model, _agent, id) => `queue.${kvToken(model)}.${opaqueId("queue", id)}`,
  service: (crew, _agent, instance) => `svc.${kvToken(crew)}.${opaqueId("instance", instance)}`,
  serviceFilter: () => undefined,
};

// ---- scoped: kind, provider and namespace as tokens (docs/rules/state.md §2.4) ----

function parseScoped(key: string): TicketsKey {
  const t = key.split(".");
  const provider = t.length >= 3 ? kvUntoken(t[1]!) : undefined;
  if (provider === undefined || provider === "") return { kind: "foreign" };
  switch (t[0]) {
    case "t":
      return t.length === 4 && t[3] !== ""
        ? { kind: "ticket", provider, ticketId: t[3]! }
        : { kind: "foreign" };
    case "r":
      return t.length === 3 ? { kind: "residency", provider, modelToken: t[2]! } : { kind: "foreign" };
    case "g":
      return t.length === 3 && t[2] === "claim" ? { kind: "guard", provider } : { kind: "foreign" };
    case "s":
      return t.length === 3 && t[2] === "suspect" ? { kind: "suspect", provider } : { kind: "foreign" };
    case "c":
      return t.length === 4 && CONVERSATION_KEY.test(t[3]!)
        ? { kind: "conversation", provider, key: t[3]! }
        : { kind: "foreign" };
    default:
      return { kind: "foreign" };
  }
}

function scopedLayout(holderId: string): KeyLayout {
  const ownNamespace = kvToken(agentNamespace(holderAgent(holderId)));
  // Most tickets keyed here are this process's own: their namespace is computed once.
  const namespaceOfHolder = (h: string | undefined) =>
    h === undefined || h === holderId ? ownNamespace : kvToken(agentNamespace(holderAgent(h)));
  const p = (provider: string) => kvToken(provider);
  const ns = (agent: string) => kvToken(agentNamespace(agent));
  const nm = (agent: string) => kvToken(agentName(agent));
  return {
    name: "scoped",
    providerOffers: true,
    ticket: (r) => `t.${p(r.provider)}.${namespaceOfHolder(r.holderId)}.${r.ticketId}`,
    residency: (provider, model) => `r.${p(provider)}.${kvToken(model)}`,
    guard: (provider) => `g.${p(provider)}.claim`,
    suspect: (provider) => `s.${p(provider)}.suspect`,
    conversation: (provider, agent, key) => `c.${p(provider)}.${ns(agent)}.${conversationKey(key)}`,
    parse: parseScoped,
    providerOf: (key) => {
      const k = parseScoped(key);
      return k.kind === "foreign" ? undefined : k.provider;
    },
    providerFilter: (provider) => `*.${p(provider)}.>`,
    // Ids are UUIDs; anything else (a wildcard above all) matches no ticket.
    ticketByIdFilter: (ticketId) => (/^[A-Za-z0-9-]+$/.test(ticketId) ? `t.*.*.${ticketId}` : undefined),
    wait: (model, agent) => `wait.${kvToken(model)}.${ns(agent)}.${nm(agent)}`,
    intent: (model, agent) => `intent.${kvToken(model)}.${ns(agent)}.${nm(agent)}`,
    // Per namespace: a namespace's sidecars share one counter per model (their rates add up
    // in core's aggregateDemand), and a namespace's NATS user may write only its own.
    use: (model, agent) => `use.${kvToken(model)}.${ns(agent)}`,
    sel: (crew, agent) => `sel.${ns(agent)}.${kvToken(crew)}.${nm(agent)}`,
    modelFilter: (model) => `*.${kvToken(model)}.>`,
    selFilter: () => "sel.>",
    // Under the model's filter, like its waits; per namespace, for the NATS permissions.
    queue: (model, agent, id) => `queue.${kvToken(model)}.${ns(agent)}.${opaqueId("queue", id)}`,
    service: (crew, agent, instance) => `svc.${ns(agent)}.${kvToken(crew)}.${opaqueId("instance", instance)}`,
    serviceFilter: () => "svc.>",
  };
}
