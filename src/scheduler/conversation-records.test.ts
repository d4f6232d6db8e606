// What a sidecar publishes of its conversations and reads of the others' (docs/rules/placement.md
// §5.5): opaque keys, salted leading-part hashes, writes only when worth it, and shared prefixes
// found within the namespace only.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { indexConversations } from "../core/index.js";
import {
  conversationKey,
  conversationRecord,
  MIN_SHARED_PREFIX_CHARS,
  sharedPrefixes,
  worthWriting,
} from "./conversation-records.js";
import type { PromptMarks } from "./conversations.js";

/** A prompt of parts of `chars` characters each, with hashes that name the parts so far. */
function marks(parts: [string, number][]): PromptMarks {
  let total = 0;
  return {
    hashes: parts.map((_, i) =>
      parts
        .slice(0, i + 1)
        .map((p) => p[0])
        .join("+"),
    ),
    chars: parts.map(([, c]) => (total += c)),
    assistant: parts.map(() => false),
  };
}

const system: [string, number] = ["system", 6_000];
const tokensOf = (chars: number) => Math.round(chars / 4);
const at = Date.UTC(2026, 11, 6);
const where = { provider: "rig-1", model: "qwen3:14b" };

describe("conversation records", () => {
  it("keep their key format across releases: SHA-256 of each part followed by a NUL, 22 base64url characters", () => {
    // Sidecars of two releases share records during a rollout: they must name a conversation alike.
    const h = createHash("sha256");
    for (const p of ["conversation", "crew/a1", "my-secret-id"]) h.update(p).update("\0");
    expect(conversationKey("crew/a1", "my-secret-id")).toBe(h.digest("base64url").slice(0, 22));
  });

  it("name the conversation by a hash of agent and id, and carry no id or text", () => {
    const r = conversationRecord(
      "crew/a1",
      conversationKey("crew/a1", "my-secret-id"),
      where,
      marks([system, ["q1", 400]]),
      9_000,
      at,
      tokensOf,
    );
    // The key is a stable hash of agent and id: another id, or another agent, is another key.
    expect(conversationKey("crew/a1", "my-secret-id")).toBe(r.key);
    expect(conversationKey("crew/a1", "other-id")).not.toBe(r.key);
    expect(r.key).not.toBe(conversationKey("crew/a2", "my-secret-id"));
    expect(r.key).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(r)).not.toMatch(/my-secret-id|system/);
    expect(r).toMatchObject({ ...where, namespace: "crew", tokens: 9_000, atMs: at });
  });

  it("publish the long leading parts only, salted by the namespace, never the whole prompt", () => {
    const m = marks([system, ["q1", 400], ["tool", 9_000]]);
    const a = conversationRecord("crew/a1", conversationKey("crew/a1", "c"), where, m, 1, at, tokensOf);
    // The system prompt (6,000 chars) is published; the question's end (6,400) too; the last
    // mark, the prompt itself, never.
    expect(a.prefixes.map((p) => p.tokens)).toEqual([1_500, 1_600]);
    const b = conversationRecord("other/a1", conversationKey("other/a1", "c"), where, m, 1, at, tokensOf);
    expect(b.prefixes[0]!.hash).not.toBe(a.prefixes[0]!.hash);
    const short = conversationRecord(
      "crew/a1",
      conversationKey("crew/a1", "c"),
      where,
      marks([
        ["s", MIN_SHARED_PREFIX_CHARS - 1],
        ["q", 9],
      ]),
      1,
      at,
      tokensOf,
    );
    expect(short.prefixes).toEqual([]);
  });

  it("are rewritten when the conversation moved, after a minute, or when it grew by a quarter", () => {
    const r = conversationRecord(
      "crew/a1",
      conversationKey("crew/a1", "c"),
      where,
      undefined,
      8_000,
      at,
      tokensOf,
    );
    expect(worthWriting(undefined, r)).toBe(true);
    expect(worthWriting(r, { ...r, atMs: at + 1_000, tokens: 9_000 })).toBe(false);
    expect(worthWriting(r, { ...r, atMs: at + 1_000, tokens: 10_000 })).toBe(true);
    expect(worthWriting(r, { ...r, atMs: at + 60_000 })).toBe(true);
    expect(worthWriting(r, { ...r, provider: "rig-2" })).toBe(true);
    expect(worthWriting(r, { ...r, model: "qwen3:8b" })).toBe(true);
  });

  it("let another agent of the namespace expect the copies that hold its leading parts", () => {
    const theirs = conversationRecord(
      "crew/a2",
      conversationKey("crew/a2", "x"),
      where,
      marks([system, ["q2", 300]]),
      7_000,
      at,
      tokensOf,
    );
    const elsewhere = conversationRecord(
      "other/a9",
      conversationKey("other/a9", "x"),
      { ...where, provider: "rig-2" },
      marks([system, ["q", 300]]),
      7_000,
      at,
      tokensOf,
    );
    const mine = marks([system, ["q1", 400]]);
    expect(sharedPrefixes("crew/a1", mine, indexConversations([theirs, elsewhere]), undefined)).toEqual([
      { ...where, tokens: 1_500, shared: true },
    ]);
    // Not its own record, nor without a prompt seen, nor another system prompt.
    expect(sharedPrefixes("crew/a1", mine, indexConversations([theirs]), theirs.key)).toEqual([]);
    expect(sharedPrefixes("crew/a1", undefined, indexConversations([theirs]), undefined)).toEqual([]);
    expect(
      sharedPrefixes(
        "crew/a1",
        marks([
          ["other", 6_000],
          ["q", 9],
        ]),
        indexConversations([theirs]),
        undefined,
      ),
    ).toEqual([]);
  });
});
