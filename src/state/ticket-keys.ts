// Key layout of kubemoot_provider_tickets (docs/rules/state.md §2.2): Kubemoot's ticket and residency
// keys, plus our per-provider claim guard. A per-provider scan matches `<provider>__` exactly,
// so `ollama-gpu__` never matches `ollama-gpu-extended__x`, and residency keys are not tickets.
import { kvToken } from "../core/index.js";
import { invalidArgument } from "../errors/index.js";

const RESIDENCY_PREFIX = "residency__";
/**
 * The guard key of a provider: `_claim__<provider>`. It starts with `_`, which a Kubernetes
 * object name never does, so no Kubemoot per-provider scan (`<provider>__`) can match it.
 */
const GUARD_PREFIX = "_claim__";
/**
 * `_suspect__<provider>`: a sidecar found the provider unreachable (a refused or reset
 * connection). Like the guard, it starts with `_`, so Kubemoot's scans never see it.
 */
const SUSPECT_PREFIX = "_suspect__";

export type TicketsKey =
  | { kind: "ticket"; provider: string; ticketId: string }
  | { kind: "residency"; provider: string; modelToken: string }
  | { kind: "guard"; provider: string }
  | { kind: "suspect"; provider: string }
  | { kind: "foreign" };

/** Provider names become part of keys: Kubernetes names (letters, digits, `-`, `.`) pass. */
export function assertProviderName(provider: string, field = "provider"): void {
  if (!/^[A-Za-z0-9][-A-Za-z0-9.]*$/.test(provider) || provider.endsWith(".")) {
    throw invalidArgument(field, `"${provider}" is not a valid provider name`);
  }
}

export function ticketPrefix(provider: string): string {
  return `${provider}__`;
}

export function ticketKey(provider: string, ticketId: string): string {
  return `${provider}__${ticketId}`;
}

/** `residency__<provider>__<tok(model)>`: model names (`qwen3:8b`) are not valid key characters. */
export function residencyKey(provider: string, model: string): string {
  return `${RESIDENCY_PREFIX}${provider}__${kvToken(model)}`;
}

export function guardKey(provider: string): string {
  return `${GUARD_PREFIX}${provider}`;
}

export function suspectKey(provider: string): string {
  return `${SUSPECT_PREFIX}${provider}`;
}

/** Classifies a key of the tickets bucket; anything else is foreign (and skipped). */
export function parseTicketsKey(key: string): TicketsKey {
  if (key.startsWith(GUARD_PREFIX)) {
    const provider = key.slice(GUARD_PREFIX.length);
    return provider === "" ? { kind: "foreign" } : { kind: "guard", provider };
  }
  if (key.startsWith(SUSPECT_PREFIX)) {
    const provider = key.slice(SUSPECT_PREFIX.length);
    return provider === "" ? { kind: "foreign" } : { kind: "suspect", provider };
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

/** The provider a tickets-bucket key belongs to (the mirror's per-provider index). */
export function providerOfKey(key: string): string | undefined {
  const k = parseTicketsKey(key);
  return k.kind === "foreign" ? undefined : k.provider;
}
