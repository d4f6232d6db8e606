import { describe, expect, it } from "vitest";
import { INITIAL_CHARS_PER_TOKEN, learnCharsPerToken } from "./chars-per-token.js";
import { messageChars, nextPromptTokens, promptChars, toolsChars } from "./prompt-size.js";

describe("§3 prompt size counts text, tool results, tool calls and tool specs", () => {
  it("message text (string and OpenAI parts)", () => {
    expect(messageChars({ role: "user", content: "hello" })).toBe(5);
    expect(
      messageChars({
        role: "user",
        content: [{ type: "text", text: "ab" }, { type: "image_url" }, { text: "cd" }],
      }),
    ).toBe(4);
    expect(messageChars({ role: "assistant", content: null })).toBe(0);
  });
  it("tool results count the tool name and the text (Ollama tool_name, OpenAI name)", () => {
    expect(messageChars({ role: "tool", tool_name: "search", content: "result" })).toBe(12);
    expect(messageChars({ role: "tool", name: "grep", content: "x" })).toBe(5);
  });
  it("tool calls count name and arguments (object or JSON string)", () => {
    const args = { q: "a" }; // {"q":"a"} = 9 chars
    expect(
      messageChars({ role: "assistant", tool_calls: [{ function: { name: "search", arguments: args } }] }),
    ).toBe(15);
    expect(
      messageChars({ role: "assistant", tool_calls: [{ function: { name: "s", arguments: '{"q":"a"}' } }] }),
    ).toBe(10);
  });
  it("tool specifications count name, description and parameters", () => {
    const params = { type: "object" }; // {"type":"object"} = 17 chars
    expect(
      toolsChars([{ type: "function", function: { name: "ls", description: "list", parameters: params } }]),
    ).toBe(23);
    expect(toolsChars(undefined)).toBe(0);
  });
  it("a whole prompt is the sum", () => {
    expect(promptChars([{ content: "abc" }, { content: "de" }], [{ function: { name: "t" } }])).toBe(6);
    expect(promptChars(null)).toBe(0);
  });
});

describe("§3 a loop's next prompt = last prompt + last reply + appended estimate", () => {
  it("adds the estimate of the appended messages at the learned ratio", () => {
    // 1000 + 200 + ceil(35 / 3.5) = 1210
    expect(nextPromptTokens(1000, 200, [{ role: "tool", tool_name: "t", content: "x".repeat(34) }])).toBe(
      1210,
    );
    const four = learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 4000, 1000);
    // ceil(35 / 4) = 9
    expect(nextPromptTokens(1000, 200, [{ content: "y".repeat(35) }], four)).toBe(1209);
  });
  it("treats missing counts as zero", () => {
    expect(nextPromptTokens(Number.NaN, -5, [])).toBe(0);
  });
});
