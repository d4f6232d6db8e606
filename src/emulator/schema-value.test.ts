// Values generated for JSON schemas validate against them (ajv), for many seeds.
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { Rng } from "../prng/index.js";
import { requestedTools } from "./answer.js";
import { valueFor } from "./schema-value.js";

const ajv = new Ajv({ strict: false });
addFormats.default(ajv);

const SCHEMAS: Record<string, object> = {
  scalars: {
    type: "object",
    properties: {
      i: { type: "integer", exclusiveMinimum: 3, exclusiveMaximum: 6 },
      n: { type: "number", minimum: -1, maximum: -0.5 },
      m: { type: "number", multipleOf: 0.25, minimum: 1, maximum: 2 },
      s: { type: "string", minLength: 20, maxLength: 24 },
      c: { const: "fixed" },
      e: { enum: [1, "two", null] },
      u: { type: "string", format: "uuid" },
      d: { type: "string", format: "date" },
      t: { type: "string", format: "time" },
      url: { type: "string", format: "uri" },
      nul: { type: "null" },
      either: { type: ["null", "boolean"] },
    },
    required: ["i", "n", "m", "s", "c", "e", "u", "d", "t", "url", "nul", "either"],
    additionalProperties: false,
  },
  arrays: {
    type: "array",
    items: [{ type: "string" }, { type: "integer" }],
    minItems: 2,
    maxItems: 2,
  },
  unique: { type: "array", items: { enum: ["a", "b", "c"] }, uniqueItems: true, minItems: 3 },
  recursive: {
    $defs: {
      Node: {
        type: "object",
        properties: { v: { type: "integer" }, kids: { type: "array", items: { $ref: "#/$defs/Node" } } },
        required: ["v"],
      },
    },
    $ref: "#/$defs/Node",
  },
  allOf: {
    allOf: [
      { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      { properties: { b: { type: "integer" } }, required: ["b"] },
    ],
  },
  oneOf: { oneOf: [{ type: "string", maxLength: 3 }, { type: "integer" }] },
  zodNullable: {
    type: "object",
    properties: { x: { anyOf: [{ type: "null" }, { type: "number" }] } },
    required: ["x"],
  },
};

describe("valueFor", () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name}: valid for 50 seeds, and a function of the seed`, () => {
      const validate = ajv.compile(schema);
      for (let seed = 1; seed <= 50; seed++) {
        const v = valueFor(schema, new Rng(seed));
        expect(validate(v), `${JSON.stringify(v)} ${JSON.stringify(validate.errors)}`).toBe(true);
        expect(valueFor(schema, new Rng(seed))).toEqual(v);
      }
    });
  }
});

describe("requestedTools", () => {
  const tools = [
    { name: "get_current_weather", parameters: {} },
    { name: "add", parameters: {} },
    { name: "searchWeb", parameters: {} },
  ];
  it.each([
    ["What's the weather like?", ["get_current_weather"]],
    ["call get_current_weather", ["get_current_weather"]],
    ["get current weather please", ["get_current_weather"]],
    ["please add these", ["add"]],
    ["address book", []],
    ["search web for cats", ["searchWeb"]],
    ["hello there", []],
  ])("%s → %j", (text, names) => {
    expect(requestedTools(text, tools).map((t) => t.name)).toEqual(names);
  });
});
