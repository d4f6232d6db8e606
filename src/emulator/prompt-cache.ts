// Prompt caches as engines keep them (docs/rules/engines.md "Prompt caches"), over prompts the
// emulator knows by their parts (messages, or blocks of raw text) rather than by tokens: a prompt
// is a chain of marks, each the hash of everything up to a part's end and the tokens up to there,
// so two prompts share a prefix exactly as far as their chains agree. Two shapes of cache:
// - per slot (Ollama, llama.cpp): each slot holds the prompt (and answer) it last ran; a request
//   takes the free slot that shares the most with it;
// - per copy (vLLM's prefix cache, SGLang's radix tree): a tree of marks shared by every request
//   of the copy, bounded in tokens, least recently used leaves evicted first.
// Pure: no clock, no I/O; time is passed in as a number.
import { createHash } from "node:crypto";

/** A prompt as a cache sees it: `hashes[i]` names everything up to `tokens[i]` tokens. */
export interface PromptChain {
  readonly hashes: readonly string[];
  /** Cumulative, strictly increasing. */
  readonly tokens: readonly number[];
}

export const EMPTY_CHAIN: PromptChain = { hashes: [], tokens: [] };

/** One part of a prompt: its text (as the template renders it) and its tokens. */
export interface PromptPart {
  text: string;
  tokens: number;
}

/** `chain` followed by `parts` (a part of no tokens adds no mark). */
export function extendChain(chain: PromptChain, parts: readonly PromptPart[]): PromptChain {
  const hashes = [...chain.hashes];
  const tokens = [...chain.tokens];
  let last = hashes.at(-1) ?? "";
  let total = tokens.at(-1) ?? 0;
  for (const p of parts) {
    if (p.tokens <= 0) continue;
    last = createHash("sha256").update(last).update("\0").update(p.text).digest("base64url").slice(0, 22);
    total += p.tokens;
    hashes.push(last);
    tokens.push(total);
  }
  return { hashes, tokens };
}

/** Tokens of the longest prefix `a` and `b` share (at a mark of both). */
export function sharedTokens(a: PromptChain, b: PromptChain): number {
  const n = Math.min(a.hashes.length, b.hashes.length);
  let i = 0;
  while (i < n && a.hashes[i] === b.hashes[i]) i++;
  return i === 0 ? 0 : (a.tokens[i - 1] as number);
}

/**
 * What a request may reuse of what is cached: at most all but the prompt's last token (engines
 * evaluate at least one token, for its logits).
 */
export function reusable(shared: number, promptTokens: number): number {
  return Math.max(0, Math.min(shared, promptTokens - 1));
}

interface SlotEntry {
  chain: PromptChain;
  busy: boolean;
  lastUsed: number;
}

/** Per-slot caches (Ollama's input cache slots, llama.cpp's slots). */
export class SlotCaches {
  private readonly slots: SlotEntry[];

  constructor(count: number) {
    this.slots = Array.from({ length: Math.max(1, count) }, () => ({
      chain: EMPTY_CHAIN,
      busy: false,
      lastUsed: 0,
    }));
  }

  /**
   * Takes the free slot that shares the most with `chain` (the least recently used among
   * equals): its index and the tokens it shares; undefined when every slot is busy.
   */
  take(chain: PromptChain): { slot: number; shared: number } | undefined {
    let best = -1;
    let bestShared = -1;
    this.slots.forEach((s, i) => {
      if (s.busy) return;
      const shared = sharedTokens(s.chain, chain);
      const top = this.slots[best];
      if (shared > bestShared || (shared === bestShared && top !== undefined && s.lastUsed < top.lastUsed)) {
        best = i;
        bestShared = shared;
      }
    });
    if (best < 0) return undefined;
    (this.slots[best] as SlotEntry).busy = true;
    return { slot: best, shared: bestShared };
  }

  /** Frees `slot`, which now holds `chain` (the prompt and what was generated after it). */
  release(slot: number, chain: PromptChain, now: number): void {
    const s = this.slots[slot];
    if (!s) return;
    s.busy = false;
    s.chain = chain;
    s.lastUsed = now;
  }

  /** Tokens held in all slots. */
  get cachedTokens(): number {
    return this.slots.reduce((n, s) => n + (s.chain.tokens.at(-1) ?? 0), 0);
  }
}

interface Node {
  parent: Node | undefined;
  /** Tokens from the parent's end to this mark's. */
  span: number;
  tokens: number;
  children: number;
  lastUsed: number;
}

/**
 * A copy's shared prefix cache (vLLM's hashed blocks, SGLang's radix tree): prefixes of every
 * request, at most `capacityTokens` tokens, least recently used leaves evicted first.
 */
export class PrefixTree {
  private readonly nodes = new Map<string, Node>();
  private held = 0;

  constructor(private readonly capacityTokens: number) {}

  /** Tokens of `chain` the tree holds; the prefix found counts as used now. */
  lookup(chain: PromptChain, now: number): number {
    let node: Node | undefined;
    for (const h of chain.hashes) {
      const next = this.nodes.get(h);
      if (!next) break;
      node = next;
    }
    for (let n = node; n; n = n.parent) n.lastUsed = now;
    return node?.tokens ?? 0;
  }

  /** Adds `chain` (a request's prompt and answer), evicting old leaves past the capacity. */
  insert(chain: PromptChain, now: number): void {
    let parent: Node | undefined;
    for (let i = 0; i < chain.hashes.length; i++) {
      const h = chain.hashes[i] as string;
      let node = this.nodes.get(h);
      if (!node) {
        const tokens = chain.tokens[i] as number;
        node = { parent, span: tokens - (parent?.tokens ?? 0), tokens, children: 0, lastUsed: now };
        if (parent) parent.children++;
        this.nodes.set(h, node);
        this.held += node.span;
      }
      node.lastUsed = now;
      parent = node;
    }
    this.evict();
  }

  /** Empties the tree (the model unloaded). */
  clear(): void {
    this.nodes.clear();
    this.held = 0;
  }

  get cachedTokens(): number {
    return this.held;
  }

  private evict(): void {
    while (this.held > this.capacityTokens) {
      let victim: [string, Node] | undefined;
      for (const e of this.nodes) {
        if (e[1].children > 0) continue;
        if (!victim || e[1].lastUsed < victim[1].lastUsed) victim = e;
      }
      if (!victim) return;
      this.nodes.delete(victim[0]);
      this.held -= victim[1].span;
      if (victim[1].parent) victim[1].parent.children--;
    }
  }
}
