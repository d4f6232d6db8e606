// Conversation records of kubemoot_provider_tickets (docs/rules/state.md §2.4): where an agent's
// conversation last ran, as its sidecar publishes it for the others (docs/rules/placement.md
// §5.5). No text: an opaque key, the model, sizes and the hashes of the prompt's leading parts.
// Read strictly and bounded: a value another process wrote is checked field by field.
import type { ConversationSeen } from "../core/index.js";
import { isObject, num, str } from "./json-fields.js";

/** Leading-part hashes a record carries (the tools and the system prompt, and one more). */
export const MAX_PUBLISHED_PREFIXES = 3;
/** Longest model name or hash a record may carry (characters). */
const MAX_FIELD = 256;

export function conversationJson(c: ConversationSeen): Record<string, unknown> {
  return {
    v: 1,
    model: c.model,
    ns: c.namespace,
    tokens: Math.round(c.tokens),
    at: c.atMs,
    ...(c.prefixes.length > 0
      ? {
          prefixes: c.prefixes
            .slice(0, MAX_PUBLISHED_PREFIXES)
            .map((p) => ({ h: p.hash, t: Math.round(p.tokens) })),
        }
      : {}),
  };
}

/** Reads a conversation record; undefined (skip) when any field is missing or out of bounds. */
export function parseConversation(raw: unknown, provider: string, key: string): ConversationSeen | undefined {
  if (!isObject(raw)) return undefined;
  const model = str(raw.model);
  const namespace = str(raw.ns);
  const tokens = num(raw.tokens);
  const atMs = num(raw.at);
  if (model === "" || model.length > MAX_FIELD || namespace.length > MAX_FIELD) return undefined;
  if (!(tokens >= 0) || !(atMs > 0)) return undefined;
  const prefixes: { hash: string; tokens: number }[] = [];
  if (raw.prefixes !== undefined) {
    if (!Array.isArray(raw.prefixes) || raw.prefixes.length > MAX_PUBLISHED_PREFIXES) return undefined;
    for (const p of raw.prefixes) {
      const hash = isObject(p) ? str(p.h) : "";
      const t = isObject(p) ? num(p.t) : Number.NaN;
      if (hash === "" || hash.length > MAX_FIELD || !(t > 0)) return undefined;
      prefixes.push({ hash, tokens: t });
    }
  }
  return { provider, model, key, namespace, tokens, atMs, prefixes };
}
