// Patch application for the FAKE API server: RFC 7386 JSON merge patch and the RFC 6902 JSON
// patch operations add, remove, replace and test. Test-only code.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export class PatchError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** RFC 7386: objects merge recursively, null deletes, everything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) return clone(patch as Json);
  const out: Record<string, Json> = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new PatchError(422, `invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isObject(v)) {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    );
  }
  return v;
}

export interface JsonPatchOperation {
  op: string;
  path: string;
  value?: unknown;
}

/** Applies RFC 6902 operations (add, remove, replace, test) to a copy of `doc`. */
export function applyJsonPatch(doc: unknown, ops: unknown): Json {
  if (!Array.isArray(ops)) throw new PatchError(400, "a JSON patch must be a list of operations");
  let root = clone(doc as Json);
  for (const raw of ops as JsonPatchOperation[]) {
    const keys = pointer(raw.path);
    if (keys.length === 0) {
      if (raw.op === "test") {
        if (!deepEqual(root, raw.value)) throw new PatchError(422, `test failed at ""`);
        continue;
      }
      root = clone(raw.value as Json);
      continue;
    }
    const last = keys[keys.length - 1]!;
    let parent: unknown = root;
    for (const k of keys.slice(0, -1)) {
      parent = Array.isArray(parent) ? parent[Number(k)] : isObject(parent) ? parent[k] : undefined;
      if (parent === undefined) throw new PatchError(422, `path ${raw.path} does not exist`);
    }
    if (Array.isArray(parent)) {
      const idx = last === "-" ? parent.length : Number(last);
      if (!Number.isInteger(idx) || idx < 0 || idx > parent.length) {
        throw new PatchError(422, `index ${last} out of range at ${raw.path}`);
      }
      switch (raw.op) {
        case "add":
          parent.splice(idx, 0, clone(raw.value as Json));
          break;
        case "replace":
          if (idx >= parent.length) throw new PatchError(422, `path ${raw.path} does not exist`);
          parent[idx] = clone(raw.value as Json);
          break;
        case "remove":
          if (idx >= parent.length) throw new PatchError(422, `path ${raw.path} does not exist`);
          parent.splice(idx, 1);
          break;
        case "test":
          if (!deepEqual(parent[idx], raw.value)) throw new PatchError(422, `test failed at ${raw.path}`);
          break;
        default:
          throw new PatchError(422, `unsupported op ${raw.op} (FAKE API server)`);
      }
      continue;
    }
    if (!isObject(parent)) throw new PatchError(422, `path ${raw.path} does not exist`);
    switch (raw.op) {
      case "add":
        parent[last] = clone(raw.value as Json);
        break;
      case "replace":
        if (!(last in parent)) throw new PatchError(422, `path ${raw.path} does not exist`);
        parent[last] = clone(raw.value as Json);
        break;
      case "remove":
        if (!(last in parent)) throw new PatchError(422, `path ${raw.path} does not exist`);
        delete parent[last];
        break;
      case "test":
        if (!deepEqual(parent[last], raw.value)) throw new PatchError(422, `test failed at ${raw.path}`);
        break;
      default:
        throw new PatchError(422, `unsupported op ${raw.op} (FAKE API server)`);
    }
  }
  return root;
}
