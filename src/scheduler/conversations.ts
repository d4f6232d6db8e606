// What this sidecar knows of its agent's conversations (docs/rules/placement.md §5.5): per
// conversation, where its last turn ran and a fingerprint of that turn's prompt — hashes of the
// prompt up to each message boundary and the characters up to there, never the text — so that the
// next turn knows how much of its prompt that copy still holds in its prompt cache. Bounded: at
// most MAX_CONVERSATIONS conversations (least recently used first out), MAX_MARKS marks each,
// kept as plain numbers (no strings, no typed arrays with buffers of their own).

import type { ConversationSeen } from "../core/index.js";

/** A prompt's fingerprint: `hashes[i]` names the prompt up to its i-th message boundary. */
export interface PromptMarks {
  readonly hashes: readonly string[];
  /** Characters up to each boundary (cumulative). */
  readonly chars: readonly number[];
  /** Whether the part ending at each boundary is an assistant message (an earlier answer). */
  readonly assistant: readonly boolean[];
}

/** A call's conversation: its id, and its prompt's fingerprint when the sidecar saw the prompt. */
export interface ConversationRef {
  id: string;
  /** Absent for a call placed over the API: the prompt is not seen, only its size. */
  marks?: PromptMarks;
  promptChars: number;
}

/** Conversations remembered at once. */
export const MAX_CONVERSATIONS = 1024;
/** Marks kept per turn (the last always; the others spread evenly). */
export const MAX_MARKS = 32;
/** A conversation id's length limit (characters). */
export const MAX_CONVERSATION_ID = 128;

/** What a sidecar remembers of its last record of a conversation (conversation-records.ts). */
export type PublishedRecord = Pick<ConversationSeen, "provider" | "model" | "key" | "tokens" | "atMs">;

/**
 * Kept marks, packed in one array of numbers (the table holds up to MAX_CONVERSATIONS ×
 * MAX_MARKS of them): for each, its index into the prompt's marks, a 53-bit fingerprint of its
 * hash, and the characters up to it.
 */
type KeptMarks = readonly number[];
const STRIDE = 3;

interface Turn {
  /** What this sidecar last published of the conversation. */
  published?: PublishedRecord;
  marks: KeptMarks;
  /** All marks of the turn's prompt (the last kept mark's index + 1). */
  count: number;
  promptChars: number;
  provider: string;
  model: string;
}

/** The copy that holds part of a prompt, and how many of its characters. */
export interface CachedChars {
  provider: string;
  model: string;
  chars: number;
}

/**
 * A 53-bit fingerprint of a mark's hash (two 32-bit FNV-1a variants): a mismatch of two prompts
 * goes unseen with odds of 2^-53 per comparison, and the table keeps no strings.
 */
function fingerprint(hash: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < hash.length; i++) {
    const c = hash.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  return a * 0x200000 + (b & 0x1fffff);
}

const NO_MARKS: KeptMarks = [];

function keep(m: PromptMarks): KeptMarks {
  const n = m.hashes.length;
  if (n === 0) return NO_MARKS;
  const picks = new Set<number>([n - 1]);
  const step = Math.max(1, Math.ceil(n / (MAX_MARKS - 1)));
  for (let i = step - 1; i < n - 1 && picks.size < MAX_MARKS; i += step) picks.add(i);
  const out: number[] = [];
  for (const i of [...picks].sort((a, b) => a - b))
    out.push(i, fingerprint(m.hashes[i] as string), m.chars[i] as number);
  return out;
}

export class Conversations {
  private readonly turns = new Map<string, Turn>();

  constructor(private readonly max = MAX_CONVERSATIONS) {}

  get size(): number {
    return this.turns.size;
  }

  /**
   * Where the conversation's last turn ran, and how much of this prompt it holds: the prompt up
   * to the last boundary both prompts share (hashes of whole prefixes agree only if everything
   * before agrees), plus the answer that turn generated when this prompt carries it right after
   * (an assistant message where the last prompt ended). Without marks (a call over the API), a
   * prompt at least as long as the last one is taken to extend it.
   */
  cached(ref: ConversationRef | undefined): CachedChars | undefined {
    if (!ref) return undefined;
    const t = this.turns.get(ref.id);
    if (!t) return undefined;
    const where = { provider: t.provider, model: t.model };
    const m = ref.marks;
    if (!m) return ref.promptChars >= t.promptChars ? { ...where, chars: t.promptChars } : undefined;
    let best = -1;
    const k = t.marks;
    for (let i = 0; i < k.length; i += STRIDE) {
      const h = m.hashes[k[i] as number];
      if (h !== undefined && fingerprint(h) === k[i + 1]) best = i;
    }
    if (best < 0) return undefined;
    const index = k[best] as number;
    const last = index === t.count - 1;
    const answer =
      last && m.assistant[index + 1] === true ? (m.chars[index + 1] as number) : (k[best + 2] as number);
    return { ...where, chars: answer };
  }

  /**
   * Records a turn that ran on (provider, model): the next turn is priced against it. Returns
   * whether the conversation was known (an earlier turn is remembered), and what was last
   * published of it (its record lives on with it).
   */
  record(
    ref: ConversationRef,
    provider: string,
    model: string,
  ): { known: boolean; published: PublishedRecord | undefined } {
    const marks = ref.marks ? keep(ref.marks) : NO_MARKS;
    const prev = this.turns.get(ref.id);
    const published = prev?.published;
    this.turns.delete(ref.id);
    this.turns.set(ref.id, {
      marks,
      count: ref.marks?.hashes.length ?? 0,
      promptChars: ref.promptChars,
      provider,
      model,
      ...(published !== undefined ? { published } : {}),
    });
    for (const id of this.turns.keys()) {
      if (this.turns.size <= this.max) break;
      this.turns.delete(id);
    }
    return { known: prev !== undefined, published };
  }

  /** Notes what was published of a conversation (after its write). */
  published(id: string, r: PublishedRecord): void {
    const t = this.turns.get(id);
    if (t !== undefined)
      t.published = { provider: r.provider, model: r.model, key: r.key, tokens: r.tokens, atMs: r.atMs };
  }
}
