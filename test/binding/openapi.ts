// A test-only validator for the subset of OpenAPI v3 our CRDs use, with the apiserver's rules
// for structural schemas: unknown fields are pruned (not errors), `metadata` is not validated.
// It lets tests check documents against the very CRD files the chart installs.

export type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  [key: string]: unknown;
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Errors of `value` against `schema`, each `path: problem`. */
export function validate(schema: Schema, value: unknown, path = ""): string[] {
  const at = path || "<root>";
  const errors: string[] = [];
  switch (schema.type) {
    case "object": {
      if (!isObject(value)) return [`${at}: expected object`];
      for (const key of schema.required ?? []) {
        if (value[key] === undefined) errors.push(`${path ? `${path}.` : ""}${key}: required`);
      }
      for (const [key, v] of Object.entries(value)) {
        const sub = schema.properties?.[key];
        const p = path ? `${path}.${key}` : key;
        if (sub) errors.push(...validate(sub, v, p));
        else if (isObject(schema.additionalProperties))
          errors.push(...validate(schema.additionalProperties, v, p));
      }
      break;
    }
    case "array": {
      if (!Array.isArray(value)) return [`${at}: expected array`];
      if (schema.minItems !== undefined && value.length < schema.minItems)
        errors.push(`${at}: fewer than ${schema.minItems} items`);
      value.forEach((v, i) => {
        if (schema.items) errors.push(...validate(schema.items, v, `${path}[${i}]`));
      });
      if (schema["x-kubernetes-list-type"] === "map") {
        const keys = schema["x-kubernetes-list-map-keys"] ?? [];
        const seen = new Set<string>();
        for (const v of value) {
          const k = JSON.stringify(keys.map((key) => (isObject(v) ? v[key] : undefined)));
          if (seen.has(k)) errors.push(`${at}: duplicate entry ${k}`);
          seen.add(k);
        }
      }
      break;
    }
    case "string":
      if (typeof value !== "string") return [`${at}: expected string`];
      if (schema.minLength !== undefined && value.length < schema.minLength) errors.push(`${at}: too short`);
      if (schema.maxLength !== undefined && value.length > schema.maxLength) errors.push(`${at}: too long`);
      if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value))
        errors.push(`${at}: pattern`);
      if (schema.format === "date-time" && Number.isNaN(Date.parse(value)))
        errors.push(`${at}: not a date-time`);
      break;
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) return [`${at}: expected integer`];
      if (schema.minimum !== undefined && value < schema.minimum)
        errors.push(`${at}: below ${schema.minimum}`);
      break;
    case "boolean":
      if (typeof value !== "boolean") return [`${at}: expected boolean`];
      break;
    default:
      if (!schema["x-kubernetes-preserve-unknown-fields"]) errors.push(`${at}: schema has no type`);
  }
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${at}: not one of ${schema.enum.join(", ")}`);
  return errors;
}

/** Violations of the structural-schema rules (every node typed, objects and arrays complete). */
export function structuralErrors(schema: Schema, path = "<root>"): string[] {
  const errors: string[] = [];
  if (!schema.type && !schema["x-kubernetes-preserve-unknown-fields"]) errors.push(`${path}: no type`);
  if (schema.type === "array" && !schema.items) errors.push(`${path}: array without items`);
  if (schema.properties && isObject(schema.additionalProperties)) {
    errors.push(`${path}: properties and additionalProperties together`);
  }
  if (schema.default !== undefined) {
    for (const e of validate(schema, schema.default, `${path}(default)`)) errors.push(e);
  }
  if (schema.type === "object" && path.endsWith(".metadata") && schema.properties) {
    errors.push(`${path}: metadata must not declare properties`);
  }
  for (const [key, sub] of Object.entries(schema.properties ?? {}))
    errors.push(...structuralErrors(sub, `${path}.${key}`));
  if (isObject(schema.additionalProperties)) {
    errors.push(...structuralErrors(schema.additionalProperties as Schema, `${path}[*]`));
  }
  if (schema.items) errors.push(...structuralErrors(schema.items, `${path}[]`));
  return errors;
}
