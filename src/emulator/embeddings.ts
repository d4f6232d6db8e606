// Embedding routes: Ollama's POST /api/embed and POST /api/embeddings (legacy), and the
// OpenAI-compatible POST /v1/embeddings. An embedding request is one job on the emulated GPU:
// it loads the model like any other (one slot, as Ollama loads embedding models), evaluates
// the inputs' tokens at promptTokensPerS and generates nothing. Vectors: see vectors.ts.
import { modelNotFoundMessage, normalizeModelName } from "../engines/index.js";
import { sendJson } from "../net/index.js";
import type { ModelSpec } from "./catalog.js";
import { applyRequestFaults, type EmulatorCore, type RequestContext, readRequestBody } from "./core.js";
import type { JobResult } from "./gpu-types.js";
import { goKind, HttpError, parseJsonBody, toNs } from "./http-util.js";
import { keepAlive } from "./requests.js";
import { CHARS_PER_TOKEN, countTextTokens } from "./tokenizer.js";
import { embedVector, shorten, toBase64 } from "./vectors.js";

/** What a runner answers when asked to embed with a model that cannot (Ollama: 501). */
export const NO_EMBEDDINGS_MESSAGE = "this model does not support embeddings";
export const CONTEXT_EXCEEDED_MESSAGE = "the input length exceeds the context length";

interface EmbedJob {
  spec: ModelSpec;
  texts: string[];
  /** Tokens per input when it is given as token ids (OpenAI), else counted from the text. */
  tokenCounts?: number[];
  numCtx: number | undefined;
  keepAliveMs: number | undefined;
  truncate: boolean;
  /** Status of an input over the context with truncate off (legacy route: 500). */
  overStatus: number;
}

interface Embedded {
  vectors: number[][];
  promptTokens: number;
  result: JobResult;
}

function lookup(core: EmulatorCore, name: string, status404 = 404): ModelSpec {
  const spec = core.catalog.get(normalizeModelName(name));
  if (!spec) throw new HttpError(status404, modelNotFoundMessage(name));
  return spec;
}

function requireEmbedding(spec: ModelSpec): void {
  if (!spec.capabilities.includes("embedding")) throw new HttpError(501, NO_EMBEDDINGS_MESSAGE);
}

function numCtxOption(body: Record<string, unknown>): number | undefined {
  const opts = body.options;
  if (opts === undefined || opts === null) return undefined;
  if (typeof opts !== "object" || Array.isArray(opts))
    throw new HttpError(400, `json: cannot unmarshal ${goKind(opts)} into Go struct field options`);
  const v = (opts as Record<string, unknown>).num_ctx;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
    throw new HttpError(400, `option "num_ctx" must be a non-negative integer, got ${JSON.stringify(v)}`);
  return v;
}

function dimensionsOf(body: Record<string, unknown>, struct: string): number | undefined {
  const v = body.dimensions;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
    throw new HttpError(
      400,
      `json: cannot unmarshal ${goKind(v)} into Go struct field ${struct}.dimensions of type int`,
    );
  return v;
}

/** The first `tokens` tokens of a text (the emulator's tokenizer: 3.5 code points each). */
function headOf(text: string, tokens: number): string {
  return [...text].slice(0, Math.floor(tokens * CHARS_PER_TOKEN)).join("");
}

/**
 * Runs one embedding job: checks the inputs against the context, waits for the GPU, and
 * resolves with one vector per input (or rejects with an HttpError).
 */
function embed(ctx: RequestContext, job: EmbedJob): Promise<Embedded> {
  const { core, res } = ctx;
  const numCtx = core.gpu.effectiveNumCtx(job.spec.name, job.numCtx);
  const texts: string[] = [];
  let promptTokens = 0;
  job.texts.forEach((text, i) => {
    let tokens = job.tokenCounts?.[i] ?? countTextTokens(text);
    let seen = text;
    if (tokens > numCtx) {
      if (!job.truncate) throw new HttpError(job.overStatus, CONTEXT_EXCEEDED_MESSAGE);
      seen = job.tokenCounts ? text.split(" ").slice(0, numCtx).join(" ") : headOf(text, numCtx);
      tokens = numCtx;
    }
    texts.push(seen);
    promptTokens += tokens;
  });
  return new Promise((resolve, reject) => {
    let finished = false;
    const submitted = core.gpu.submit(
      {
        model: job.spec.name,
        numCtx,
        keepAliveMs: job.keepAliveMs,
        kind: texts.length === 0 ? "load" : "infer",
        promptTokens,
        outputTokens: 0,
      },
      {
        onDone(result) {
          finished = true;
          const dims = job.spec.embeddingLength ?? 768;
          resolve({
            vectors: texts.map((t) => embedVector(job.spec.name, t, dims)),
            promptTokens,
            result,
          });
        },
        onError(message, status) {
          finished = true;
          reject(new HttpError(status, message));
        },
      },
    );
    if (!submitted.ok) {
      reject(new HttpError(submitted.status, submitted.message));
      return;
    }
    const handle = submitted.job;
    res.on("close", () => {
      if (!finished) handle.cancel();
    });
  });
}

function metrics(e: Embedded): Record<string, number> {
  const out: Record<string, number> = {};
  if (e.result.totalMs > 0) out.total_duration = toNs(e.result.totalMs);
  if (e.result.loadMs > 0) out.load_duration = toNs(e.result.loadMs);
  if (e.promptTokens > 0) out.prompt_eval_count = e.promptTokens;
  return out;
}

/** POST /api/embed: `input` a string or a list of strings; `truncate` (default true). */
export async function handleEmbed(ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const body = parseJsonBody(await readRequestBody(ctx), "api.EmbedRequest");
  const model = body.model ?? body.name;
  if (typeof model !== "string" || model.trim() === "") throw new HttpError(400, "model is required");
  let texts: string[];
  const input = body.input;
  if (typeof input === "string") texts = input === "" ? [] : [input];
  else if (Array.isArray(input) && input.every((x) => typeof x === "string")) texts = input as string[];
  else if (input === undefined || input === null) texts = [];
  else throw new HttpError(400, "invalid input type");
  const truncate = body.truncate ?? true;
  if (typeof truncate !== "boolean")
    throw new HttpError(
      400,
      `json: cannot unmarshal ${goKind(truncate)} into Go struct field EmbedRequest.truncate of type bool`,
    );
  const dimensions = dimensionsOf(body, "EmbedRequest");
  const spec = lookup(core, model);
  if (await applyRequestFaults(ctx, spec.name)) return;
  requireEmbedding(spec);
  const out = await embed(ctx, {
    spec,
    texts,
    numCtx: numCtxOption(body),
    keepAliveMs: keepAlive(body),
    truncate,
    overStatus: 400,
  });
  sendJson(ctx.res, 200, {
    model,
    embeddings: out.vectors.map((v) => shorten(v, dimensions)),
    ...metrics(out),
  });
}

/** POST /api/embeddings (legacy): `prompt` → `embedding`; an empty prompt loads the model. */
export async function handleEmbeddings(ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const body = parseJsonBody(await readRequestBody(ctx), "api.EmbeddingRequest");
  const model = body.model ?? body.name;
  if (typeof model !== "string" || model.trim() === "") throw new HttpError(400, "model is required");
  const prompt = body.prompt ?? "";
  if (typeof prompt !== "string")
    throw new HttpError(
      400,
      `json: cannot unmarshal ${goKind(prompt)} into Go struct field EmbeddingRequest.prompt of type string`,
    );
  const spec = lookup(core, model);
  if (await applyRequestFaults(ctx, spec.name)) return;
  requireEmbedding(spec);
  const out = await embed(ctx, {
    spec,
    texts: prompt === "" ? [] : [prompt],
    numCtx: numCtxOption(body),
    keepAliveMs: keepAlive(body),
    truncate: false,
    overStatus: 500,
  });
  sendJson(ctx.res, 200, { embedding: out.vectors[0] ?? [] });
}

/** POST /v1/embeddings: `input` a string, strings, token ids or lists of token ids. */
export async function handleOpenAIEmbeddings(ctx: RequestContext): Promise<void> {
  const { core, res } = ctx;
  const body = parseJsonBody(await readRequestBody(ctx), "openai.EmbedRequest");
  const model = body.model;
  if (typeof model !== "string" || model.trim() === "") throw new HttpError(400, "model is required");
  const input = body.input;
  let texts: string[];
  let tokenCounts: number[] | undefined;
  const isTokens = (x: unknown) => Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t));
  if (typeof input === "string" && input !== "") texts = [input];
  else if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === "string"))
    texts = input;
  else if (isTokens(input)) {
    texts = [(input as number[]).join(" ")];
    tokenCounts = [(input as number[]).length];
  } else if (Array.isArray(input) && input.length > 0 && input.every(isTokens)) {
    texts = (input as number[][]).map((t) => t.join(" "));
    tokenCounts = (input as number[][]).map((t) => t.length);
  } else throw new HttpError(400, "invalid input");
  const format = body.encoding_format ?? "float";
  if (format !== "float" && format !== "base64")
    throw new HttpError(400, `invalid encoding_format "${String(format)}": expected "float" or "base64"`);
  const dimensions = dimensionsOf(body, "EmbedRequest");
  const spec = lookup(core, model);
  if (await applyRequestFaults(ctx, spec.name)) return;
  requireEmbedding(spec);
  const out = await embed(ctx, {
    spec,
    texts,
    tokenCounts,
    numCtx: undefined,
    keepAliveMs: undefined,
    truncate: true,
    overStatus: 400,
  });
  sendJson(res, 200, {
    object: "list",
    data: out.vectors.map((v, index) => {
      const vec = shorten(v, dimensions);
      return { object: "embedding", embedding: format === "base64" ? toBase64(vec) : vec, index };
    }),
    model,
    usage: { prompt_tokens: out.promptTokens, total_tokens: out.promptTokens },
  });
}
