// The sidecar's local Ollama/OpenAI-compatible proxy: an agent points its existing client at
// it and every call is placed by the scheduler, forwarded to the chosen GPU server with the
// chosen model, streamed back, and its ticket released. Behaviour and its decisions
// (unknown models, num_ctx, errors) are documented in README.md beside this file.
//
//   const proxy = await startProxy({ host: "127.0.0.1", port: 11434, scheduler,
//     providers: () => state.providers.peekAll(), logger, options: { numCtxPolicy: "pin" } });
//   ...
//   await proxy.close(20_000); // drain for up to 20 s, then abort and release what is left
export { handleCall } from "./call.js";
export type { CallContext, ForwardOutcome } from "./call-context.js";
export { knownModels, openaiModelsBody, psBody, tagsBody } from "./catalog.js";
export { errorUnit } from "./forward-stream.js";
export { type FrameTap, ndjsonTap, type StreamReport, sseTap } from "./framing.js";
export { attributionHeaders, callCandidates, parseCallHeaders, REQUEST_HEADERS } from "./kubemoot-headers.js";
export { createProxyMetrics } from "./metrics.js";
export { decideNumCtx, type NumCtxDecision, type NumCtxPolicy } from "./num-ctx.js";
export {
  type CallRecord,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_PROXY_PORT,
  DEFAULT_TIMEOUT_MS,
  type ProxyHooks,
  type ProxyOptions,
  type ProxySettings,
  resolveSettings,
  type TruncationReport,
} from "./options.js";
export { type ProxyServer, startProxy } from "./server.js";
export {
  type Api,
  type CallRequest,
  goDurationMs,
  parseChat,
  parseGenerate,
  parseOpenAIChat,
} from "./validate.js";
