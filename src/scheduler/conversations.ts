// What this sidecar knows of its agent's conversations (docs/rules/placement.md §5.5): per
// conversation, where its last turn ran and a fingerprint of that turn's prompt — hashes of the
// prompt up to each message boundary and the characters up to there, never the text — so that the
// next turn knows how much of its prompt that copy still holds in its prompt cache. Bounded: at
// most MAX_CONVERSATIONS conversations (least recently used first out), MAX_MARKS marks each.

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

interface Turn {
  /** Kept marks: index into the prompt's marks, its hash, the characters up to it. */
  marks: { index: number; hash: string; chars: number }[];
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

function keep(m: PromptMarks): Turn["marks"] {
  const n = m.hashes.length;
  if (n === 0) return [];
  const picks = new Set<number>([n - 1]);
  const step = Math.max(1, Math.ceil(n / (MAX_MARKS - 1)));
  for (let i = step - 1; i < n - 1 && picks.size < MAX_MARKS; i += step) picks.add(i);
  return [...picks]
    .sort((a, b) => a - b)
    .map((index) => ({ index, hash: m.hashes[index] as string, chars: m.chars[index] as number }));
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
    let best: Turn["marks"][number] | undefined;
    for (const k of t.marks) if (m.hashes[k.index] === k.hash) best = k;
    if (!best) return undefined;
    const last = best.index === t.count - 1;
    const answer =
      last && m.assistant[best.index + 1] === true ? (m.chars[best.index + 1] as number) : best.chars;
    return { ...where, chars: answer };
  }

  /** Records a turn that ran on (provider, model): the next turn is priced against it. */
  record(ref: ConversationRef, provider: string, model: string): void {
    const marks = ref.marks ? keep(ref.marks) : [];
    this.turns.delete(ref.id);
    this.turns.set(ref.id, {
      marks,
      count: ref.marks?.hashes.length ?? 0,
      promptChars: ref.promptChars,
      provider,
      model,
    });
    for (const id of this.turns.keys()) {
      if (this.turns.size <= this.max) break;
      this.turns.delete(id);
    }
  }
}
