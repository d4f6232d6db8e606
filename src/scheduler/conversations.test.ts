import { describe, expect, it } from "vitest";
import { type ConversationRef, Conversations, MAX_MARKS, type PromptMarks } from "./conversations.js";

/** Marks of a chat whose messages have these sizes; `assistant` marks which are answers. */
function marks(sizes: number[], assistant: number[] = [], seed = "s"): PromptMarks {
  let chars = 0;
  return {
    hashes: sizes.map((_, i) => `${seed}-${i}`),
    chars: sizes.map((n) => (chars += n)),
    assistant: sizes.map((_, i) => assistant.includes(i)),
  };
}
const ref = (id: string, m: PromptMarks): ConversationRef => ({
  id,
  marks: m,
  promptChars: m.chars.at(-1) ?? 0,
});

describe("Conversations", () => {
  it("knows where a conversation's last turn ran and how much of the next prompt it holds, its answer included", () => {
    const c = new Conversations();
    c.record(ref("t", marks([100, 50])), "b", "m");
    // The next turn: the same two messages, the answer (an assistant message) and a new question.
    expect(c.cached(ref("t", marks([100, 50, 80, 30], [2])))).toEqual({
      provider: "b",
      model: "m",
      chars: 230,
    });
    // A next turn that does not carry the answer right after: only the shared prompt.
    expect(c.cached(ref("t", marks([100, 50, 30])))).toEqual({ provider: "b", model: "m", chars: 150 });
    // A prompt that changed from its second message on (an edited history): the first only.
    const edited = marks([100, 60], [], "s");
    expect(c.cached(ref("t", { ...edited, hashes: ["s-0", "other"] }))).toEqual({
      provider: "b",
      model: "m",
      chars: 100,
    });
    // Nothing shared, or a conversation never seen: no cache.
    expect(c.cached(ref("t", marks([100], [], "x")))).toBeUndefined();
    expect(c.cached(ref("new", marks([100])))).toBeUndefined();
  });

  it("keeps a bounded number of marks per turn and of conversations, least recently used out first", () => {
    const c = new Conversations(2);
    const long = marks(Array.from({ length: 500 }, () => 10));
    c.record(ref("a", long), "p", "m");
    // The last mark is always kept: a turn that extends all of it shares all 5,000 characters.
    expect(c.cached(ref("a", marks([...Array.from({ length: 500 }, () => 10), 5])))?.chars).toBe(5000);
    // A prompt that shares only its first 100 messages gets a kept mark at or below 1,000.
    const part = marks([...Array.from({ length: 100 }, () => 10), 7], [], "s");
    const got = c.cached(ref("a", { ...part, hashes: [...part.hashes.slice(0, 100), "z"] }))?.chars ?? 0;
    expect(got).toBeGreaterThan(1000 - (500 / (MAX_MARKS - 1)) * 10 - 10);
    expect(got).toBeLessThanOrEqual(1000);
    c.record(ref("b", marks([1])), "p", "m");
    c.record(ref("c", marks([1])), "p", "m");
    expect(c.size).toBe(2);
    expect(c.cached(ref("a", long))).toBeUndefined();
  });

  it("without marks (a call over the API), takes a longer prompt to extend the last turn", () => {
    const c = new Conversations();
    c.record({ id: "api", promptChars: 4000 }, "p", "m");
    expect(c.cached({ id: "api", promptChars: 4500 })).toEqual({ provider: "p", model: "m", chars: 4000 });
    expect(c.cached({ id: "api", promptChars: 3000 })).toBeUndefined();
  });
});
