// Ollama's model-management routes. On this fleet models are placed by the operator (Model and
// ModelProvider objects, or fleet placement), so a client's pull, delete, copy, create or push
// is answered with a clear 403 — never a bare "no route", and never forwarded to a shared GPU.
import { ErrorCode, KubemootError } from "../../src/errors/index.js";

/** Method and path of each management route, with the verb the message uses. */
const MANAGEMENT: ReadonlyArray<{ method: string; path: string | RegExp; verb: string }> = [
  { method: "POST", path: "/api/pull", verb: "pulled" },
  { method: "DELETE", path: "/api/delete", verb: "deleted" },
  { method: "POST", path: "/api/copy", verb: "copied" },
  { method: "POST", path: "/api/create", verb: "created" },
  { method: "POST", path: "/api/push", verb: "pushed" },
  // `ollama create` uploads its files here first.
  { method: "POST", path: /^\/api\/blobs\/[^/]+$/, verb: "uploaded" },
  { method: "HEAD", path: /^\/api\/blobs\/[^/]+$/, verb: "uploaded" },
];

export const MANAGEMENT_DOC = "docs/deploy.md (Model bundles)";

/** The 403 for a model-management request, or undefined when `method path` is none. */
export function managementRefusal(method: string, path: string): KubemootError | undefined {
  const hit = MANAGEMENT.find(
    (r) => r.method === method && (typeof r.path === "string" ? r.path === path : r.path.test(path)),
  );
  if (!hit) return undefined;
  return new KubemootError(
    ErrorCode.PermissionDenied,
    `models on this fleet are managed by the Kubemoot operator and cannot be ${hit.verb} through the sidecar: declare them as Model and ModelProvider objects (or let fleet placement put them), see ${MANAGEMENT_DOC}`,
    { reason: "managed-by-operator", detail: { doc: MANAGEMENT_DOC } },
  );
}
