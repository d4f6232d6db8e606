// The proxy's routes that place nothing (server.ts lists them): the health answer, the version,
// the model lists aggregated over the providers' states, one OpenAI model, /api/show asked of a
// provider that has the model, and the management routes refused (management.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import type { ProviderState } from "../../src/core/index.js";
import { normalizeModelName } from "../../src/engines/index.js";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import { sendJson } from "../../src/net/index.js";
import { parseJsonObject, readBody } from "./body.js";
import { openaiModel, openaiModelsBody, psBody, tagsBody } from "./catalog.js";
import { badRequest } from "./http-errors.js";
import { managementRefusal } from "./management.js";
import type { ProxySettings } from "./options.js";

export interface OtherRoutes {
  settings: ProxySettings;
  dispatcher: Dispatcher;
  states: () => Promise<ProviderState[]>;
}

function modelNotFound(message: string, model: string): KubemootError {
  return new KubemootError(ErrorCode.NotFound, message, { reason: "model-not-found", detail: { model } });
}

/** Answers `method path`; throws what is answered as an error (404 for no route). */
export async function serveOther(
  o: OtherRoutes,
  method: string,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const get = method === "GET" || method === "HEAD";
  if (path === "/" && get) {
    const text = "Ollama is running";
    res.writeHead(200, {
      "content-type": "text/plain; charset=utf-8",
      "content-length": String(text.length),
    });
    res.end(method === "HEAD" ? undefined : text);
    return;
  }
  if (path === "/api/version" && get) return sendJson(res, 200, { version: o.settings.version });
  if (path === "/api/tags" && get) return sendJson(res, 200, tagsBody(await o.states()));
  if (path === "/api/ps" && get) return sendJson(res, 200, psBody(await o.states()));
  if (path === "/v1/models" && get) return sendJson(res, 200, openaiModelsBody(await o.states()));
  if (path.startsWith("/v1/models/") && get) return retrieveModel(o, path.slice("/v1/models/".length), res);
  if (path === "/api/show" && method === "POST") return show(o, req, res);
  req.resume();
  const managed = managementRefusal(method, path);
  if (managed) throw managed;
  throw new KubemootError(ErrorCode.NotFound, `no route ${method} ${path}`);
}

/** GET /v1/models/{id} (ids may hold slashes: "hf.co/org/model:tag"). */
async function retrieveModel(o: OtherRoutes, raw: string, res: ServerResponse): Promise<void> {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw badRequest("not a valid URL-encoded model id", "model");
  }
  const entry = openaiModel(await o.states(), id);
  if (!entry) throw modelNotFound(`The model \`${id}\` does not exist on this fleet`, id);
  sendJson(res, 200, entry);
}

/** POST /api/show: asked of a ready provider that has the model (no ticket: it loads nothing). */
async function show(o: OtherRoutes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parseJsonObject(await readBody(req, o.settings.maxBodyBytes));
  const raw = typeof body.model === "string" ? body.model : typeof body.name === "string" ? body.name : "";
  if (raw.trim() === "") throw badRequest("is required", "model");
  const model = normalizeModelName(raw);
  const has = (s: ProviderState) =>
    s.ready &&
    (s.loadedModels.includes(model) ||
      model in (s.loadedModelFootprintsMiB ?? {}) ||
      model in (s.availableModelFootprintsMiB ?? {}));
  const target = (await o.states()).find(has);
  if (!target) throw modelNotFound(`model "${model}" not found, try pulling it first`, model);
  const base = new URL(target.endpoint);
  try {
    const up = await o.dispatcher.request({
      origin: base.origin,
      path: `${base.pathname.replace(/\/+$/, "")}/api/show`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...body, model }),
      signal: AbortSignal.timeout(Math.min(o.settings.timeoutMs, 30_000)),
    });
    const text = await up.body.text();
    res.writeHead(up.statusCode, {
      "content-type": String(up.headers["content-type"] ?? "application/json"),
      "content-length": String(Buffer.byteLength(text)),
      "x-kubemoot-provider": target.name,
    });
    res.end(text);
  } catch (err) {
    const message = `provider ${target.name}: ${(err as Error).message}`;
    throw new KubemootError(ErrorCode.ProviderFailure, message, { detail: { provider: target.name } });
  }
}
