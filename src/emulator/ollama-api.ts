// Ollama's native API over the GPU model: /api/chat, /api/generate, /api/ps, /api/tags,
// /api/show, /api/version.

import {
  BYTES_PER_MIB,
  modelNotFoundMessage,
  normalizeModelName,
  type OllamaModelDetails,
  type OllamaPsModel,
  type OllamaShowResponse,
  type OllamaTagModel,
} from "../engines/index.js";
import { sendJson } from "../net/index.js";
import { planAnswer } from "./answer.js";
import type { ModelSpec } from "./catalog.js";
import {
  applyRequestFaults,
  type EmulatorCore,
  isoAt,
  type RequestContext,
  readRequestBody,
} from "./core.js";
import { HttpError, parseJsonBody } from "./http-util.js";
import { ollamaSink, runInference } from "./inference.js";
import { chatChain, textChain } from "./prompt-parts.js";
import { parseChatRequest, parseGenerateRequest, parseShowRequest } from "./requests.js";
import { generatePromptTokens, truncateChat, truncateTokens } from "./tokenizer.js";

/** Go's time.Duration(math.MaxInt64) in ms: what a "forever" keep_alive adds to now. */
const FOREVER_MS = 9_223_372_036_854.775;

export function modelDetails(spec: ModelSpec): OllamaModelDetails {
  return {
    parent_model: "",
    format: "gguf",
    family: spec.family,
    families: [spec.family],
    parameter_size: spec.parameterSize,
    quantization_level: spec.quantization,
  };
}

function lookup(core: EmulatorCore, name: string): ModelSpec {
  const spec = core.catalog.get(normalizeModelName(name));
  if (!spec) throw new HttpError(404, modelNotFoundMessage(name));
  return spec;
}

/** The full name Ollama's capability errors print ("registry.ollama.ai/library/gemma3:4b"). */
function qualifiedName(name: string): string {
  const slashes = name.split("/").length - 1;
  if (slashes === 0) return `registry.ollama.ai/library/${name}`;
  return slashes === 1 ? `registry.ollama.ai/${name}` : name;
}

/**
 * Ollama's capability checks, each a 400: an embedding model asked to chat or generate, `think`
 * on a model that does not think, `tools` for a model without tool calling.
 */
export function requireCapabilities(
  spec: ModelSpec,
  asked: string,
  api: "chat" | "generate",
  want: { think?: boolean | undefined; tools?: number },
): void {
  if (want.think === true && !spec.capabilities.includes("thinking"))
    throw new HttpError(400, `${JSON.stringify(asked)} does not support thinking`);
  if (!spec.capabilities.includes("completion"))
    throw new HttpError(400, `${JSON.stringify(asked)} does not support ${api}`);
  if ((want.tools ?? 0) > 0 && !spec.capabilities.includes("tools"))
    throw new HttpError(400, `${qualifiedName(spec.name)} does not support tools`);
}

/** A load-only or unload request (no prompt / no messages), answered with one JSON object. */
function loadOrUnload(
  ctx: RequestContext,
  api: "chat" | "generate",
  spec: ModelSpec,
  numCtx: number,
  keepAliveMs: number | undefined,
): void {
  const { core, res } = ctx;
  const answer = (reason: "load" | "unload") => {
    const body = api === "chat" ? { message: { role: "assistant", content: "" } } : { response: "" };
    sendJson(
      res,
      200,
      api === "chat"
        ? { model: spec.name, created_at: isoAt(core), ...body, done_reason: reason, done: true }
        : { model: spec.name, created_at: isoAt(core), ...body, done: true, done_reason: reason },
    );
  };
  if (keepAliveMs === 0) {
    core.gpu.expire(spec.name);
    answer("unload");
    return;
  }
  if (res.destroyed || res.socket?.destroyed) return;
  let finished = false;
  const submitted = core.gpu.submit(
    { model: spec.name, numCtx, keepAliveMs, kind: "load", promptTokens: 0, outputTokens: 0 },
    {
      onDone() {
        finished = true;
        answer("load");
      },
      onError(message, status) {
        finished = true;
        sendJson(res, status, { error: message });
      },
    },
  );
  if (!submitted.ok) {
    sendJson(res, submitted.status, { error: submitted.message });
    return;
  }
  const job = submitted.job;
  res.on("close", () => {
    if (!finished) job.cancel();
  });
}

export async function handleChat(ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const req = parseChatRequest(parseJsonBody(await readRequestBody(ctx), "api.ChatRequest"));
  const spec = lookup(core, req.model);
  if (await applyRequestFaults(ctx, spec.name)) return;
  requireCapabilities(spec, req.model, "chat", { think: req.think, tools: req.tools.length });
  const numCtx = core.gpu.effectiveNumCtx(spec.name, req.options.numCtx);
  if (!req.messages || req.messages.length === 0) {
    loadOrUnload(ctx, "chat", spec, numCtx, req.keepAliveMs);
    return;
  }
  const toolsTokens = req.toolsJson ? Math.ceil(req.toolsJson.length / 3.5) : 0;
  const cut = truncateChat(req.messages, req.truncate ? numCtx : Number.MAX_SAFE_INTEGER, toolsTokens);
  if (!req.truncate && cut.renderedTokens > numCtx) {
    throw new HttpError(400, "the input length exceeds the context length");
  }
  // num_keep only chooses which tokens survive a cut, never how many: min(prompt, num_ctx).
  const evaluated = Math.min(cut.renderedTokens, numCtx);
  const last = req.messages[req.messages.length - 1];
  const plan = planAnswer({
    model: spec.name,
    lastRole: last?.role ?? "user",
    lastText: last?.content ?? "",
    proseTokens: core.config.outputTokens,
    think: req.think === true,
    format: req.format,
    tools: req.tools,
    toolChoice: "auto",
    numPredict: req.options.numPredict,
  });
  runInference(core, ctx.res, ollamaSink(core, ctx.res, "chat", spec.name, req.stream), {
    path: ctx.path,
    model: spec.name,
    numCtx,
    keepAliveMs: req.keepAliveMs,
    promptTokens: evaluated,
    plan,
    // A prompt cut at token level shares no known prefix.
    chain: cut.renderedTokens <= numCtx ? chatChain(cut.kept, req.toolsJson) : undefined,
  });
}

export async function handleGenerate(ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const req = parseGenerateRequest(parseJsonBody(await readRequestBody(ctx), "api.GenerateRequest"));
  const spec = lookup(core, req.model);
  if (await applyRequestFaults(ctx, spec.name)) return;
  requireCapabilities(spec, req.model, "generate", { think: req.think });
  const numCtx = core.gpu.effectiveNumCtx(spec.name, req.options.numCtx);
  if (req.prompt === "") {
    loadOrUnload(ctx, "generate", spec, numCtx, req.keepAliveMs);
    return;
  }
  const tokens = generatePromptTokens(req.prompt, req.system, req.raw);
  if (!req.truncate && tokens > numCtx)
    throw new HttpError(400, "the input length exceeds the context length");
  const evaluated = truncateTokens(tokens, numCtx, req.options.numKeep).evaluated;
  const plan = planAnswer({
    model: spec.name,
    lastRole: "user",
    lastText: req.prompt,
    proseTokens: core.config.outputTokens,
    think: req.think === true,
    format: req.format,
    tools: [],
    toolChoice: "none",
    numPredict: req.options.numPredict,
  });
  runInference(core, ctx.res, ollamaSink(core, ctx.res, "generate", spec.name, req.stream), {
    path: ctx.path,
    model: spec.name,
    numCtx,
    keepAliveMs: req.keepAliveMs,
    promptTokens: evaluated,
    plan,
    chain:
      tokens > numCtx ? undefined : req.raw ? textChain(req.prompt) : generateChain(req.prompt, req.system),
  });
}

/** A generate prompt as its template renders it: an optional system message, then the prompt. */
function generateChain(prompt: string, system: string | undefined) {
  return chatChain([
    ...(system ? [{ role: "system", content: system }] : []),
    { role: "user", content: prompt },
  ]);
}

export function psModels(core: EmulatorCore): OllamaPsModel[] {
  const now = core.clock.now();
  const wallNow = core.clock.wallTimeOf(now);
  const rows = core.gpu.resident().map((r) => {
    const expiresWall =
      r.expiresAt === Number.POSITIVE_INFINITY ? wallNow + FOREVER_MS : core.clock.wallTimeOf(r.expiresAt);
    const bytes = r.footprintMiB * BYTES_PER_MIB;
    return {
      expiresWall,
      entry: {
        name: r.model,
        model: r.model,
        size: bytes,
        digest: r.digest,
        details: modelDetails(r.spec),
        expires_at: new Date(expiresWall).toISOString(),
        size_vram: bytes,
        context_length: r.numCtx,
      } satisfies OllamaPsModel,
    };
  });
  rows.sort((a, b) => b.expiresWall - a.expiresWall || a.entry.name.localeCompare(b.entry.name));
  return rows.map((r) => r.entry);
}

export async function handlePs(ctx: RequestContext): Promise<void> {
  if (await applyRequestFaults(ctx)) return;
  sendJson(ctx.res, 200, { models: psModels(ctx.core) });
}

export function tagModels(core: EmulatorCore): OllamaTagModel[] {
  const modified = new Date(core.startedAt).toISOString();
  return [...core.catalog.values()].map((spec) => ({
    name: spec.name,
    model: spec.name,
    modified_at: modified,
    size: Math.round(spec.onDiskMiB * BYTES_PER_MIB),
    digest: spec.digest,
    details: modelDetails(spec),
  }));
}

export async function handleTags(ctx: RequestContext): Promise<void> {
  if (await applyRequestFaults(ctx)) return;
  sendJson(ctx.res, 200, { models: tagModels(ctx.core) });
}

export async function handleVersion(ctx: RequestContext): Promise<void> {
  if (await applyRequestFaults(ctx)) return;
  sendJson(ctx.res, 200, { version: ctx.core.config.version });
}

export async function handleShow(ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const name = parseShowRequest(parseJsonBody(await readRequestBody(ctx), "api.ShowRequest"));
  const spec = lookup(core, name);
  if (await applyRequestFaults(ctx, spec.name)) return;
  const body: OllamaShowResponse = {
    license: "",
    modelfile: `# Modelfile of the Kubemoot emulator\nFROM ${spec.name}\n`,
    parameters: "",
    template: "{{ .Prompt }}",
    details: modelDetails(spec),
    model_info: {
      "general.architecture": spec.family,
      "general.parameter_count": spec.parameterCount,
      "general.quantization_version": 2,
      [`${spec.family}.context_length`]: spec.contextLength,
      "kubemoot.emulator.kv_mib_per_token": spec.kvMiBPerToken,
      "kubemoot.emulator.weights_mib": spec.weightsMiB,
      ...(spec.embeddingLength !== undefined
        ? { [`${spec.family}.embedding_length`]: spec.embeddingLength }
        : {}),
    },
    capabilities: spec.capabilities,
    modified_at: new Date(core.startedAt).toISOString(),
  };
  sendJson(ctx.res, 200, body);
}
