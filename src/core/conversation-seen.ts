// A conversation as the sidecars publish it in the shared state (docs/rules/placement.md §5.5):
// its own file, so that the snapshot and the prompt-cache pricing both read it.

/**
 * A conversation whose last turn ran on a copy, as its sidecar publishes it in the shared state
 * (docs/rules/state.md §2.4): no text, only hashes and sizes.
 */
export interface ConversationSeen {
  provider: string;
  model: string;
  /** Opaque: a hash of the agent and its conversation id. */
  key: string;
  /** The agent's namespace: shared prefixes are matched within it only. */
  namespace: string;
  /** Prompt tokens (its last prompt and answer) the copy holds for it. */
  tokens: number;
  /** When its last turn there ended (epoch ms). */
  atMs: number;
  /** Its prompt's leading parts (tools, system prompt) by their prefix hashes, with their tokens. */
  prefixes: readonly { hash: string; tokens: number }[];
}

/** One copy's records: by when their turn ended (oldest first), and by key. */
export interface CopyConversations {
  readonly byTime: readonly ConversationSeen[];
  readonly byKey: ReadonlyMap<string, ConversationSeen>;
}

/**
 * The records ready for decisions, built once per change of the records (the state layer keeps
 * it): per copy, and per published prefix hash (prefix hashes are salted by namespace).
 */
export interface ConversationIndex {
  /** Per copy, keyed by copyKey(provider, model). */
  readonly copies: ReadonlyMap<string, CopyConversations>;
  readonly prefixes: ReadonlyMap<string, readonly { record: ConversationSeen; tokens: number }[]>;
}

export function copyKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

export const NO_CONVERSATIONS: ConversationIndex = { copies: new Map(), prefixes: new Map() };

export function indexConversations(records: readonly ConversationSeen[]): ConversationIndex {
  if (records.length === 0) return NO_CONVERSATIONS;
  const lists = new Map<string, ConversationSeen[]>();
  const prefixes = new Map<string, { record: ConversationSeen; tokens: number }[]>();
  for (const r of records) {
    const k = copyKey(r.provider, r.model);
    const list = lists.get(k);
    if (list === undefined) lists.set(k, [r]);
    else list.push(r);
    for (const p of r.prefixes) {
      const at = prefixes.get(p.hash);
      if (at === undefined) prefixes.set(p.hash, [{ record: r, tokens: p.tokens }]);
      else at.push({ record: r, tokens: p.tokens });
    }
  }
  const copies = new Map<string, CopyConversations>();
  for (const [k, list] of lists) {
    list.sort((a, b) => a.atMs - b.atMs);
    copies.set(k, { byTime: list, byKey: new Map(list.map((r) => [r.key, r])) });
  }
  return { copies, prefixes };
}

/** Index of the first record of `byTime` whose turn ended at or after `ms`. */
export function firstSince(byTime: readonly ConversationSeen[], ms: number): number {
  let lo = 0;
  let hi = byTime.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((byTime[mid] as ConversationSeen).atMs < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
