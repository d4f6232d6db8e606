// What the emulator's answers contain, over HTTP with the official clients: structured output
// (`format`, `response_format`), tool calls, and thinking. Schemas are checked with ajv.
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { postJson } from "../helpers/emulator-http.js";

let emu: EmulatorHandle;
let ollama: Ollama;
let openai: OpenAI;
const ajv = new Ajv({ strict: false });
addFormats.default(ajv);

beforeAll(async () => {
  emu = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    numParallel: 4,
    models: { "qwen3:8b": 4863, "llama3.1:8b": 4700, "gemma3:4b": 3300 },
    timeScale: 0.001,
    outputTokens: 8,
  });
  ollama = new Ollama({ host: emu.url });
  openai = new OpenAI({ baseURL: `${emu.url}/v1`, apiKey: "unused", maxRetries: 0 });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(() => {
  emu.reset();
});

/** What pydantic writes for a model with a nested model, a list and an enum. */
const PERSON = {
  $defs: {
    Address: {
      type: "object",
      properties: { city: { type: "string" }, zip: { type: "string", minLength: 5, maxLength: 5 } },
      required: ["city", "zip"],
    },
  },
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer", minimum: 0, maximum: 120 },
    score: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
    active: { type: "boolean" },
    role: { type: "string", enum: ["admin", "user", "guest"] },
    tags: { type: "array", items: { type: "string" }, minItems: 3, maxItems: 5, uniqueItems: true },
    address: { $ref: "#/$defs/Address" },
    nickname: { anyOf: [{ type: "string" }, { type: "null" }] },
    joined: { type: "string", format: "date-time" },
    email: { type: "string", format: "email" },
  },
  required: ["name", "age", "score", "active", "role", "tags", "address", "nickname", "joined", "email"],
  additionalProperties: false,
};

function checkSchema(schema: object, text: string): unknown {
  const value = JSON.parse(text) as unknown;
  const validate = ajv.compile(schema);
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
  return value;
}

describe("structured output (ollama client)", () => {
  it('format: "json" answers a JSON object', async () => {
    const r = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "list three colours" }],
      format: "json",
    });
    const v = JSON.parse(r.message.content) as Record<string, unknown>;
    expect(typeof v).toBe("object");
    expect(r.done_reason).toBe("stop");
    expect(r.eval_count).toBeGreaterThan(1);
  });

  it("format: a schema answers JSON matching it, the same for the same prompt", async () => {
    const ask = () =>
      ollama.chat({
        model: "qwen3:8b",
        messages: [{ role: "user", content: "who is Ada?" }],
        format: PERSON,
      });
    const a = await ask();
    const v = checkSchema(PERSON, a.message.content) as Record<string, unknown>;
    expect((v.tags as string[]).length).toBeGreaterThanOrEqual(3);
    expect((await ask()).message.content).toBe(a.message.content);
    const other = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "who is Grace?" }],
      format: PERSON,
    });
    expect(other.message.content).not.toBe(a.message.content);
  });

  it("streams the JSON split across chunks; the chunks concatenate to the same JSON", async () => {
    const whole = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "who is Ada?" }],
      format: PERSON,
    });
    const stream = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "who is Ada?" }],
      format: PERSON,
      stream: true,
    });
    const parts: string[] = [];
    for await (const chunk of stream) if (!chunk.done) parts.push(chunk.message.content);
    expect(parts.length).toBeGreaterThan(10);
    expect(parts.join("")).toBe(whole.message.content);
  });

  it("generate honours format too; arrays and scalars at the top", async () => {
    const list = { type: "array", items: { type: "integer", multipleOf: 5 }, minItems: 1 };
    const r = await ollama.generate({ model: "llama3.1:8b", prompt: "numbers", format: list });
    checkSchema(list, r.response ?? "");
    const bad = await postJson(`${emu.url}/api/chat`, {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "x" }],
      format: "yaml",
      stream: false,
    });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toMatch(/format/);
  });
});

const WEATHER = {
  type: "function" as const,
  function: {
    name: "get_current_weather",
    description: "Get the current weather for a city",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        days: { type: "integer", minimum: 1, maximum: 7 },
      },
      required: ["city", "unit"],
    },
  },
};
const ADD = {
  type: "function" as const,
  function: {
    name: "add",
    description: "Add two numbers",
    parameters: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
  },
};

describe("tool calls (ollama client)", () => {
  it("a prompt that names a tool's noun gets a tool call with arguments matching its schema", async () => {
    const r = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "What is the weather in Paris?" }],
      tools: [ADD, WEATHER],
    });
    expect(r.message.content).toBe("");
    expect(r.done_reason).toBe("stop");
    expect(r.message.tool_calls).toHaveLength(1);
    const call = r.message.tool_calls?.[0];
    expect(call?.function.name).toBe("get_current_weather");
    checkSchema(WEATHER.function.parameters, JSON.stringify(call?.function.arguments));
  });

  it("no tool mentioned: prose; after a tool message: prose", async () => {
    const prose = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "tell me a story" }],
      tools: [WEATHER],
    });
    expect(prose.message.tool_calls ?? []).toHaveLength(0);
    expect(prose.message.content).toMatch(/\.$/);
    const after = await ollama.chat({
      model: "qwen3:8b",
      messages: [
        { role: "user", content: "What is the weather in Paris?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "get_current_weather", arguments: { city: "Paris" } } }],
        },
        { role: "tool", content: '{"temp": 21}' },
      ],
      tools: [WEATHER],
    });
    expect(after.message.tool_calls ?? []).toHaveLength(0);
    expect(after.message.content.length).toBeGreaterThan(0);
  });

  it("two tools named: two calls, in the tools' order; streamed as a chunk before the last", async () => {
    const stream = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "add 2 and 3, then get the weather" }],
      tools: [WEATHER, ADD],
      stream: true,
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    const withCalls = chunks.filter((c) => (c.message.tool_calls ?? []).length > 0);
    expect(withCalls).toHaveLength(1);
    expect(withCalls[0]?.done).toBe(false);
    expect(withCalls[0]?.message.tool_calls?.map((t) => t.function.name)).toEqual([
      "get_current_weather",
      "add",
    ]);
    expect(chunks.at(-1)?.done).toBe(true);
    expect(chunks.map((c) => c.message.content).join("")).toBe("");
  });

  it("a model without tool calling answers Ollama's 400", async () => {
    await expect(
      ollama.chat({
        model: "gemma3:4b",
        messages: [{ role: "user", content: "weather?" }],
        tools: [WEATHER],
      }),
    ).rejects.toMatchObject({
      status_code: 400,
      error: "registry.ollama.ai/library/gemma3:4b does not support tools",
    });
  });
});

describe("thinking (ollama client)", () => {
  it("think: true gives thinking before the answer, streamed first", async () => {
    const r = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "why?" }],
      think: true,
    });
    expect(r.message.thinking?.length).toBeGreaterThan(0);
    expect(r.message.content.length).toBeGreaterThan(0);
    expect(r.eval_count).toBe(16); // 8 thinking + 8 answer
    const stream = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "why?" }],
      think: true,
      stream: true,
    });
    const kinds: string[] = [];
    let thinking = "";
    for await (const c of stream) {
      if (c.message.thinking) {
        kinds.push("t");
        thinking += c.message.thinking;
      } else if (c.message.content) kinds.push("c");
    }
    expect(kinds.join("")).toBe("tttttttt" + "cccccccc");
    expect(thinking).toBe(r.message.thinking);
  });

  it("no think, or think: false: no thinking; generate thinks too", async () => {
    const r = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "why?" }],
      think: false,
    });
    expect(r.message.thinking).toBeUndefined();
    const g = await ollama.generate({ model: "qwen3:8b", prompt: "why?", think: true });
    expect(g.thinking?.length).toBeGreaterThan(0);
  });

  it("a model that does not think answers Ollama's 400", async () => {
    await expect(
      ollama.chat({ model: "llama3.1:8b", messages: [{ role: "user", content: "why?" }], think: true }),
    ).rejects.toMatchObject({ status_code: 400, error: '"llama3.1:8b" does not support thinking' });
  });
});

describe("the OpenAI route (openai client)", () => {
  it("response_format json_schema and json_object", async () => {
    const r = await openai.chat.completions.create({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "who is Ada?" }],
      response_format: { type: "json_schema", json_schema: { name: "person", schema: PERSON, strict: true } },
    });
    checkSchema(PERSON, r.choices[0]?.message.content ?? "");
    const o = await openai.chat.completions.create({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "who is Ada?" }],
      response_format: { type: "json_object" },
    });
    expect(typeof JSON.parse(o.choices[0]?.message.content ?? "")).toBe("object");
  });

  it("tool calls: ids, JSON-string arguments, finish_reason tool_calls; streamed deltas too", async () => {
    const r = await openai.chat.completions.create({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "What is the weather in Paris?" }],
      tools: [WEATHER, ADD],
    });
    const choice = r.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe("function");
    expect(call?.id).toMatch(/^call_[0-9a-z]+$/);
    if (call?.type !== "function") throw new Error("not a function call");
    expect(call.function.name).toBe("get_current_weather");
    checkSchema(WEATHER.function.parameters, call.function.arguments);

    const stream = await openai.chat.completions.create({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "What is the weather in Paris?" }],
      tools: [WEATHER, ADD],
      stream: true,
    });
    const names: string[] = [];
    let args = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (tc.function?.name) names.push(tc.function.name);
        args += tc.function?.arguments ?? "";
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(names).toEqual(["get_current_weather"]);
    expect(JSON.parse(args)).toEqual(JSON.parse(call.function.arguments));
    expect(finish).toBe("tool_calls");
  });

  it("tool_choice: none, required, and a named function", async () => {
    const base = { model: "qwen3:8b", tools: [WEATHER, ADD] };
    const none = await openai.chat.completions.create({
      ...base,
      messages: [{ role: "user", content: "weather?" }],
      tool_choice: "none",
    });
    expect(none.choices[0]?.finish_reason).toBe("stop");
    const req = await openai.chat.completions.create({
      ...base,
      messages: [{ role: "user", content: "hello" }],
      tool_choice: "required",
    });
    expect(req.choices[0]?.message.tool_calls?.length).toBe(1);
    const named = await openai.chat.completions.create({
      ...base,
      messages: [{ role: "user", content: "weather?" }],
      tool_choice: { type: "function", function: { name: "add" } },
    });
    const c = named.choices[0]?.message.tool_calls?.[0];
    expect(c?.type === "function" ? c.function.name : undefined).toBe("add");
    const bad = await openai.chat.completions
      .create({
        ...base,
        messages: [{ role: "user", content: "x" }],
        tool_choice: { type: "function", function: { name: "nope" } },
      })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("reasoning_effort turns thinking on: message.reasoning, streamed first as delta.reasoning", async () => {
    const body = {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "why?" }],
      reasoning_effort: "high",
      stream: false,
    };
    const r = await postJson(`${emu.url}/v1/chat/completions`, body);
    const msg = JSON.parse(r.text).choices[0].message;
    expect(msg.reasoning.length).toBeGreaterThan(0);
    expect(msg.content.length).toBeGreaterThan(0);
    const stream = await openai.chat.completions.create({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "why?" }],
      reasoning_effort: "high",
      stream: true,
    });
    let order = "";
    for await (const c of stream) {
      const d = c.choices[0]?.delta as { reasoning?: string; content?: string } | undefined;
      if (d?.reasoning) order += "r";
      else if (d?.content) order += "c";
    }
    expect(order).toBe("rrrrrrrrcccccccc");
    const none = await openai.chat.completions
      .create({ model: "llama3.1:8b", messages: [{ role: "user", content: "x" }], reasoning_effort: "low" })
      .catch((e: unknown) => e);
    expect(none).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("max_tokens cuts JSON and tool calls short: finish_reason length, no calls", async () => {
    const r = await openai.chat.completions.create({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "What is the weather in Paris?" }],
      tools: [WEATHER],
      max_tokens: 3,
    });
    expect(r.choices[0]?.finish_reason).toBe("length");
    expect(r.choices[0]?.message.tool_calls ?? []).toHaveLength(0);
    expect(r.usage?.completion_tokens).toBe(3);
  });
});
