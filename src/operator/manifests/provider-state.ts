// Provider state documents (the `kubemoot_provider_state` KV value): one state with a `name`,
// a list of states, or an object keyed by provider name. Missing fields take zero values and
// unknown fields are ignored (docs/rules/state.md); a field of the wrong type is an error naming it.
import type { ProviderState } from "../../core/index.js";
import { describe, type FieldReader, isObject, type Json } from "../../manifests/index.js";

/** Reads provider states from one document value; issues go to `r`. */
export function readProviderStates(r: FieldReader, value: unknown): ProviderState[] {
  if (Array.isArray(value)) {
    return value.flatMap((x, i) => {
      const s = readState(r, x, `[${i}]`, undefined);
      return s ? [s] : [];
    });
  }
  if (!isObject(value)) {
    r.fail("", `expected a provider state object or list, got ${describe(value)}`);
    return [];
  }
  if (typeof value.name === "string") {
    const s = readState(r, value, "", undefined);
    return s ? [s] : [];
  }
  return Object.entries(value).flatMap(([key, x]) => {
    const s = readState(r, x, `["${key}"]`, key);
    return s ? [s] : [];
  });
}

/** Whether a document without apiVersion and kind is meant as provider state. */
export function looksLikeProviderState(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(isObject);
  if (!isObject(value)) return false;
  if (typeof value.name === "string") return true;
  const entries = Object.values(value);
  return entries.length > 0 && entries.every(isObject);
}

function readState(
  r: FieldReader,
  x: unknown,
  path: string,
  key: string | undefined,
): ProviderState | undefined {
  if (!isObject(x)) return r.fail(path, `expected a provider state object, got ${describe(x)}`);
  const at = (f: string) => (path ? `${path}.${f}` : f);
  const name = r.string(x, "name", at("name")) ?? key;
  if (name === undefined || name === "") return r.fail(at("name"), "required");
  const num = (f: string) => r.integer(x, f, at(f)) ?? 0;
  const map = (f: string): Record<string, number> => {
    const m = r.object(x, f, at(f));
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(m ?? {})) {
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
        r.fail(`${at(f)}["${k}"]`, `expected a number ≥ 0, got ${describe(v)}`);
      } else out[k] = v;
    }
    return out;
  };
  return {
    name,
    endpoint: r.string(x, "endpoint", at("endpoint")) ?? "",
    maxParallel: num("maxParallel"),
    activeCount: num("activeCount"),
    queueDepth: num("queueDepth"),
    loadedModels: r.stringArray(x as Json, "loadedModels", at("loadedModels")) ?? [],
    ready: r.boolean(x, "ready", at("ready")) ?? false,
    lastProbedAt: r.string(x, "lastProbedAt", at("lastProbedAt")) ?? "",
    totalVramMiB: num("totalVramMiB"),
    loadedModelFootprintsMiB: map("loadedModelFootprintsMiB"),
    availableModelFootprintsMiB: map("availableModelFootprintsMiB"),
    contextLength: num("contextLength"),
    loadedModelContextLengths: map("loadedModelContextLengths"),
    ...singleSlot(r.stringArray(x as Json, "singleSlotModels", at("singleSlotModels"))),
  };
}

function singleSlot(models: string[] | undefined): Pick<ProviderState, "singleSlotModels"> {
  return models !== undefined && models.length > 0 ? { singleSlotModels: models } : {};
}
