// Chat messages to a prompt (docs/rules/engines.md "A real llama.cpp engine"): the model's own
// chat template (GGUF `tokenizer.chat_template`, ChatML when it has none) rendered with a Jinja
// engine (@huggingface/jinja), with the generation prompt appended, as llama-server does before
// it tokenizes a chat. Tools are refused as llama-server refuses them without --jinja (a 500):
// this engine has no tool-call parser. Images need a multimodal projector it does not load.
import { Template } from "@huggingface/jinja";
import { invalidArgument } from "../errors/index.js";
import type { Body } from "./request-params.js";
import { withoutJinja } from "./wire.js";

/** llama.cpp's fallback when a model carries no template. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export interface ChatMessage {
  role: string;
  content: string;
}

function textOf(content: unknown, i: number): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content))
    throw invalidArgument(`messages[${i}].content`, "must be a string or a list of parts");
  let text = "";
  for (const [j, part] of content.entries()) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (p?.type === "text" && typeof p.text === "string") text += p.text;
    else if (p?.type === "image_url" || p?.type === "input_audio")
      throw invalidArgument(`messages[${i}].content[${j}]`, `${p.type} input is not supported by this model`);
    else throw invalidArgument(`messages[${i}].content[${j}]`, 'expected {"type": "text", "text": string}');
  }
  return text;
}

/** The messages of a chat request, validated; tools refused as llama-server without --jinja. */
export function readMessages(body: Body): ChatMessage[] {
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length > 0) throw withoutJinja("tools param requires --jinja flag");
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== null && choice !== "auto" && choice !== "none")
    throw withoutJinja("tool_choice param requires --jinja flag");
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalidArgument("messages", "must be a non-empty list of messages");
  return messages.map((m, i) => {
    const msg = m as { role?: unknown; content?: unknown } | null;
    if (typeof msg !== "object" || msg === null) throw invalidArgument(`messages[${i}]`, "must be an object");
    if (typeof msg.role !== "string" || msg.role === "")
      throw invalidArgument(`messages[${i}].role`, "must be a non-empty string");
    return { role: msg.role, content: textOf(msg.content, i) };
  });
}

/** A model's chat template, compiled once. */
export class ChatTemplate {
  readonly source: string;
  private readonly template: Template;

  constructor(
    source: string | undefined,
    private readonly special: { bos: string; eos: string },
  ) {
    this.source = source && source.trim() !== "" ? source : CHATML_TEMPLATE;
    this.template = new Template(this.source);
  }

  /** The prompt for `messages`, ending where the assistant's answer begins. */
  render(messages: readonly ChatMessage[]): string {
    return this.template.render({
      messages,
      add_generation_prompt: true,
      bos_token: this.special.bos,
      eos_token: this.special.eos,
    });
  }
}
