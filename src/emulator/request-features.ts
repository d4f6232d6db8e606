// Validation of what shapes an answer beyond its length: `format`, `think`, `tools` (Ollama)
// and `response_format`, `reasoning_effort`, `tools`, `tool_choice` (OpenAI). Every failure is
// an HttpError(400) naming the field.
import type { OutputFormat, ToolChoice, ToolDef } from "./answer.js";
import { goKind, HttpError } from "./http-util.js";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Ollama's `format`: "json", a JSON schema object, or absent ("" too). */
export function parseFormat(v: unknown): OutputFormat {
  if (v === undefined || v === null || v === "") return undefined;
  if (v === "json") return "json";
  if (isObject(v)) return v;
  throw new HttpError(
    400,
    `invalid format: expected "json" or a JSON schema object, got ${JSON.stringify(v)}`,
  );
}

/** Ollama's `think`: a boolean, or a level ("high", "medium", "low") meaning true. */
export function parseThink(v: unknown): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (v === "high" || v === "medium" || v === "low") return true;
  throw new HttpError(
    400,
    `invalid think value: must be a boolean or "high", "medium" or "low", got ${JSON.stringify(v)}`,
  );
}

/** `tools` of either API: [{type: "function", function: {name, description, parameters}}]. */
export function parseTools(v: unknown, struct: string): ToolDef[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v))
    throw new HttpError(
      400,
      `json: cannot unmarshal ${goKind(v)} into Go struct field ${struct}.tools of type api.Tools`,
    );
  return v.map((t, i) => {
    const fn = isObject(t) ? t.function : undefined;
    if (!isObject(fn) || typeof fn.name !== "string" || fn.name === "")
      throw new HttpError(400, `tools[${i}].function.name is required`);
    if (fn.parameters !== undefined && fn.parameters !== null && !isObject(fn.parameters))
      throw new HttpError(400, `tools[${i}].function.parameters must be a JSON schema object`);
    return { name: fn.name, parameters: fn.parameters ?? { type: "object", properties: {} } };
  });
}

/** OpenAI's `response_format`: text, json_object or json_schema ({json_schema: {schema}}). */
export function parseResponseFormat(v: unknown): OutputFormat {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new HttpError(400, "response_format must be an object");
  switch (v.type) {
    case "text":
      return undefined;
    case "json_object":
      return "json";
    case "json_schema": {
      const js = v.json_schema;
      if (!isObject(js) || !isObject(js.schema))
        throw new HttpError(400, "response_format.json_schema.schema must be a JSON schema object");
      return js.schema;
    }
    default:
      throw new HttpError(
        400,
        `response_format.type must be "text", "json_object" or "json_schema", got ${JSON.stringify(v.type)}`,
      );
  }
}

/** OpenAI's `tool_choice`. */
export function parseToolChoice(v: unknown, tools: readonly ToolDef[]): ToolChoice {
  if (v === undefined || v === null || v === "auto") return "auto";
  if (v === "none" || v === "required") return v;
  if (isObject(v) && isObject(v.function) && typeof v.function.name === "string") {
    const name = v.function.name;
    if (!tools.some((t) => t.name === name))
      throw new HttpError(400, `tool_choice.function.name "${name}" is not one of the tools`);
    return { name };
  }
  throw new HttpError(
    400,
    `tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name"}}`,
  );
}

/** OpenAI's `reasoning_effort` (or `reasoning.effort`), as Ollama maps it onto `think`. */
export function parseReasoningEffort(body: Record<string, unknown>): boolean | undefined {
  const r = body.reasoning;
  const v = body.reasoning_effort ?? (isObject(r) ? r.effort : undefined);
  if (v === undefined || v === null) return undefined;
  if (v === "none") return false;
  if (v === "low" || v === "medium" || v === "high") return true;
  throw new HttpError(
    400,
    `reasoning_effort must be "none", "low", "medium" or "high", got ${JSON.stringify(v)}`,
  );
}
