// What a sidecar tells the others of its agent's conversations, and reads of theirs
// (docs/rules/placement.md §5.5, docs/rules/state.md §2.4): per conversation, the copy its last
// turn ran on, the tokens that copy holds for it, and the hashes of its prompt's leading parts
// (tools, system prompt) salted with the namespace, so that another agent of the crew that sends
// the same leading parts can expect that copy to hold them. No text, and no conversation id: the
// key is a hash of the agent and the id.
import { hash as cryptoHash } from "node:crypto";
import {
  agentNamespace,
  type CachedPrefix,
  type ConversationIndex,
  type ConversationSeen,
} from "../core/index.js";
import type { CachedChars, PromptMarks, PublishedRecord } from "./conversations.js";

/** Leading marks published (and matched) per conversation. */
const LEADING_MARKS = 3;
/**
 * A leading part shorter than this (characters, about 500 tokens) is not published: a hit on it
 * would save less than a quarter of a second of prefill.
 */
export const MIN_SHARED_PREFIX_CHARS = 2048;
/** A record is rewritten when its conversation moved, or this long after the last write (ms)… */
const REFRESH_MS = 60_000;
/** …or when the tokens its copy holds grew by this factor since. */
const REWRITE_GROWTH = 1.25;

function hash(...parts: string[]): string {
  // Each part followed by a NUL, hashed in one call (half the cost of a Hash object): every
  // placement of a conversation's turn computes its key.
  return cryptoHash("sha256", `${parts.join("\0")}\0`, "base64url").slice(0, 22);
}

/** The opaque key of `agent`'s conversation `id`. */
export function conversationKey(agent: string, id: string): string {
  return hash("conversation", agent, id);
}

/** A prompt's leading marks as published: salted hashes and their characters. */
function leading(namespace: string, marks: PromptMarks): { hash: string; chars: number }[] {
  const out: { hash: string; chars: number }[] = [];
  // The last mark is the whole prompt, the conversation's own: never a shared part.
  const n = Math.min(LEADING_MARKS, marks.hashes.length - 1);
  for (let i = 0; i < n; i++) {
    const chars = marks.chars[i] ?? 0;
    if (chars >= MIN_SHARED_PREFIX_CHARS)
      out.push({ hash: hash("prefix", namespace, marks.hashes[i]!), chars });
  }
  return out;
}

/**
 * The record of a turn of `agent`'s conversation `key` (conversationKey) that ran on (provider,
 * model): `tokens` the copy now holds for it (prompt and answer); `tokensOf` turns characters
 * into tokens.
 */
export function conversationRecord(
  agent: string,
  key: string,
  where: { provider: string; model: string },
  marks: PromptMarks | undefined,
  tokens: number,
  atMs: number,
  tokensOf: (chars: number) => number,
): ConversationSeen {
  const namespace = agentNamespace(agent);
  return {
    provider: where.provider,
    model: where.model,
    key,
    namespace,
    tokens: Math.max(0, Math.round(tokens)),
    atMs,
    prefixes: marks
      ? leading(namespace, marks).map((p) => ({ hash: p.hash, tokens: tokensOf(p.chars) }))
      : [],
  };
}

/** Whether `next` is worth writing over what this sidecar last wrote for the conversation. */
export function worthWriting(last: PublishedRecord | undefined, next: ConversationSeen): boolean {
  if (last === undefined || last.provider !== next.provider || last.model !== next.model) return true;
  if (next.atMs - last.atMs >= REFRESH_MS) return true;
  return next.tokens >= last.tokens * REWRITE_GROWTH;
}

/**
 * Copies that hold a leading part of this prompt for another conversation of the namespace (the
 * crew's shared system prompt and tools), by the records the sidecars published.
 */
export function sharedPrefixes(
  agent: string,
  marks: PromptMarks | undefined,
  records: ConversationIndex,
  ownKey: string | undefined,
): CachedPrefix[] {
  if (marks === undefined || records.prefixes.size === 0) return [];
  const namespace = agentNamespace(agent);
  const out: CachedPrefix[] = [];
  for (const mine of leading(namespace, marks)) {
    for (const { record: r, tokens } of records.prefixes.get(mine.hash) ?? []) {
      if (r.namespace !== namespace || r.key === ownKey) continue;
      out.push({ provider: r.provider, model: r.model, tokens, shared: true });
    }
  }
  return out;
}

/**
 * The copy the call's conversation last ran on, and the prompt tokens it still holds (`own`,
 * the sidecar's table); and the copies holding its leading parts for another conversation of
 * the crew (placement.md §5.5).
 */
export function cachedPrefixesOf(
  agent: string,
  marks: PromptMarks | undefined,
  records: ConversationIndex,
  ownKey: string | undefined,
  own: CachedChars | undefined,
  tokensOf: (chars: number) => number,
): CachedPrefix[] {
  const shared = sharedPrefixes(agent, marks, records, ownKey);
  if (!own || own.chars <= 0) return shared;
  return [...shared, { provider: own.provider, model: own.model, tokens: tokensOf(own.chars) }];
}
