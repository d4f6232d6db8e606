// The tokenizer routes in llama-server's shapes (src/engines/README.md): /tokenize ({content,
// add_special=false, parse_special=true, with_pieces=false} → {tokens}), /detokenize ({tokens} →
// {content}) and /apply-template ({messages} → {prompt}). The sidecar counts a chat's tokens
// with /apply-template then /tokenize (add_special), which is how this engine tokenizes a chat.
import type { Token } from "node-llama-cpp";
import { invalidArgument } from "../errors/index.js";
import { sendJson } from "../net/index.js";
import { readMessages } from "./chat.js";
import type { Handler } from "./http.js";
import type { EngineModel } from "./model-set.js";
import { boolField } from "./request-params.js";
import { resolveModel, tokenIds, tokenize } from "./task.js";

const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;

/** A token's piece: its text, or its byte when it is a byte token (not valid UTF-8 alone). */
function piece(m: EngineModel, id: Token): string | number[] {
  const vocab = m.model.fileInfo.metadata.tokenizer?.ggml?.tokens;
  const byte = BYTE_TOKEN.exec(vocab?.[id] ?? "");
  if (byte) {
    const b = Number.parseInt(byte[1]!, 16);
    if (b >= 0x80) return [b];
  }
  return m.model.detokenize([id], true);
}

const tokenizeRoute: Handler = async (r) => {
  const body = await r.body();
  const m = resolveModel(r.state, body.model);
  const content = body.content ?? "";
  if (typeof content !== "string") throw invalidArgument("content", "must be a string");
  const tokens = tokenize(
    m,
    content,
    boolField(body, "add_special", false),
    boolField(body, "parse_special", true),
  );
  const withPieces = boolField(body, "with_pieces", false);
  sendJson(r.res, 200, { tokens: withPieces ? tokens.map((id) => ({ id, piece: piece(m, id) })) : tokens });
};

const detokenizeRoute: Handler = async (r) => {
  const body = await r.body();
  const m = resolveModel(r.state, body.model);
  const tokens = body.tokens === undefined ? [] : tokenIds(m, body.tokens, "tokens");
  sendJson(r.res, 200, { content: m.model.detokenize(tokens, true) });
};

const applyTemplateRoute: Handler = async (r) => {
  const body = await r.body();
  const m = resolveModel(r.state, body.model);
  sendJson(r.res, 200, { prompt: m.template.render(readMessages(body)) });
};

export const TOKEN_ROUTES: Record<string, Handler> = {
  "POST /tokenize": tokenizeRoute,
  "POST /detokenize": detokenizeRoute,
  "POST /apply-template": applyTemplateRoute,
};
