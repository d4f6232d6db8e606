import { describe, expect, it } from "vitest";
import { CHATML_TEMPLATE, ChatTemplate, readMessages } from "./chat.js";
import { EngineReply } from "./wire.js";

describe("readMessages", () => {
  it("takes text content as a string or as text parts", () => {
    expect(
      readMessages({
        messages: [
          { role: "system", content: "be brief" },
          {
            role: "user",
            content: [
              { type: "text", text: "a" },
              { type: "text", text: "b" },
            ],
          },
          { role: "assistant", content: null },
        ],
      }),
    ).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "ab" },
      { role: "assistant", content: "" },
    ]);
  });

  it("refuses tools as llama-server does without --jinja: a 500 server_error", () => {
    let reply: unknown;
    try {
      readMessages({ messages: [{ role: "user", content: "x" }], tools: [{ type: "function" }] });
    } catch (err) {
      reply = err;
    }
    expect(reply).toBeInstanceOf(EngineReply);
    expect(reply).toMatchObject({
      status: 500,
      body: { error: { code: 500, message: "tools param requires --jinja flag", type: "server_error" } },
    });
  });

  it("names what is wrong with a message", () => {
    expect(() => readMessages({ messages: [] })).toThrow("messages: must be a non-empty list");
    expect(() => readMessages({ messages: [{ content: "x" }] })).toThrow("messages[0].role");
    expect(() =>
      readMessages({ messages: [{ role: "user", content: [{ type: "image_url", image_url: {} }] }] }),
    ).toThrow("messages[0].content[0]: image_url input is not supported");
  });
});

describe("ChatTemplate", () => {
  it("renders the model's template with the generation prompt, ChatML when it has none", () => {
    const messages = [
      { role: "system", content: "s" },
      { role: "user", content: "u" },
    ];
    const chatml = new ChatTemplate(undefined, { bos: "<s>", eos: "</s>" });
    expect(chatml.source).toBe(CHATML_TEMPLATE);
    expect(chatml.render(messages)).toBe(
      "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n",
    );
    const own = new ChatTemplate(
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}",
      {
        bos: "<s>",
        eos: "</s>",
      },
    );
    expect(own.render(messages)).toBe("<s>[system]s[user]u");
  });
});
