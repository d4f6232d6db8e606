// A chat prompt's fingerprint for the scheduler's conversation table (docs/rules/placement.md
// §5.5): the hash of everything up to each message boundary (tools first, then each message as
// sent), the characters up to there, and which messages are the assistant's. Only hashes and
// counts leave this module; no text is kept.
import { createHash } from "node:crypto";
import { type ChatMessage, type ChatToolSpec, promptChars } from "../../src/core/index.js";
import type { PromptMarks } from "../../src/scheduler/index.js";

function next(prev: string, text: string): string {
  return createHash("sha256").update(prev).update("\0").update(text).digest("base64url").slice(0, 22);
}

export function chatMarks(
  messages: readonly ChatMessage[],
  tools: readonly ChatToolSpec[] | undefined,
): PromptMarks {
  const hashes: string[] = [];
  const chars: number[] = [];
  const assistant: boolean[] = [];
  let h = "";
  let n = 0;
  const add = (text: string, c: number, isAssistant: boolean) => {
    h = next(h, text);
    n += c;
    hashes.push(h);
    chars.push(n);
    assistant.push(isAssistant);
  };
  if (tools && tools.length > 0) add(JSON.stringify(tools), promptChars([], tools), false);
  for (const m of messages) {
    add(
      JSON.stringify([m.role ?? "", m.content ?? "", m.tool_calls ?? null, m.name ?? m.tool_name ?? null]),
      promptChars([m]),
      m.role === "assistant",
    );
  }
  return { hashes, chars, assistant };
}

/** A conversation's id when the caller names none: the agent and how its conversation began. */
export function derivedConversation(agent: string, marks: PromptMarks): string | undefined {
  const head = marks.hashes[Math.min(1, marks.hashes.length - 1)];
  return head === undefined ? undefined : `${agent}/${head}`;
}
