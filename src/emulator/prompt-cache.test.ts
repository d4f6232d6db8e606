import { describe, expect, it } from "vitest";
import { EMPTY_CHAIN, extendChain, PrefixTree, reusable, SlotCaches, sharedTokens } from "./prompt-cache.js";

const part = (text: string, tokens = 10) => ({ text, tokens });
const chat = (...texts: string[]) =>
  extendChain(
    EMPTY_CHAIN,
    texts.map((t) => part(t)),
  );

describe("prompt chains", () => {
  it("share a prefix exactly as far as their parts agree", () => {
    const turn1 = chat("system", "user 1");
    const turn2 = extendChain(turn1, [part("assistant 1"), part("user 2")]);
    expect(turn2.tokens).toEqual([10, 20, 30, 40]);
    expect(sharedTokens(turn1, turn2)).toBe(20);
    expect(sharedTokens(turn2, chat("system", "user 1", "assistant 1", "other"))).toBe(30);
    // The same text after a different start is a different prefix.
    expect(sharedTokens(chat("system B", "user 1"), turn1)).toBe(0);
  });

  it("leave at least the prompt's last token to evaluate", () => {
    expect(reusable(40, 40)).toBe(39);
    expect(reusable(20, 40)).toBe(20);
    expect(reusable(0, 1)).toBe(0);
  });
});

describe("SlotCaches", () => {
  it("gives a request the free slot that shares the most with it, else the least recently used", () => {
    const slots = new SlotCaches(2);
    const a = slots.take(chat("a"));
    const b = slots.take(chat("b"));
    expect([a?.shared, b?.shared]).toEqual([0, 0]);
    expect(slots.take(chat("c"))).toBeUndefined();
    slots.release(a!.slot, chat("a", "answer a"), 1);
    slots.release(b!.slot, chat("b", "answer b"), 2);
    expect(slots.take(chat("b", "answer b", "next"))).toEqual({ slot: b!.slot, shared: 20 });
    // No slot shares anything with a new conversation: it takes the least recently used free one.
    slots.release(b!.slot, chat("b"), 3);
    expect(slots.take(chat("z"))?.slot).toBe(a!.slot);
  });
});

describe("PrefixTree", () => {
  it("serves any request's shared prefix and evicts least recently used leaves past its capacity", () => {
    const tree = new PrefixTree(50);
    tree.insert(chat("system", "agent 1"), 1);
    tree.insert(chat("system", "agent 2"), 2);
    expect(tree.cachedTokens).toBe(30); // the system prompt once, and each agent's turn
    expect(tree.lookup(chat("system", "agent 3"), 3)).toBe(10);
    expect(tree.lookup(chat("system", "agent 1", "more"), 4)).toBe(20);
    tree.insert(chat("system", "agent 3", "x", "y"), 5);
    // 60 tokens held: agent 2's turn, the least recently used leaf, goes.
    expect(tree.cachedTokens).toBe(50);
    expect(tree.lookup(chat("system", "agent 2"), 6)).toBe(10);
    expect(tree.lookup(chat("system", "agent 1"), 7)).toBe(20);
    tree.clear();
    expect(tree.lookup(chat("system"), 8)).toBe(0);
  });
});
