// The sidecar's local Ollama/OpenAI-compatible proxy: an agent points its existing client at
// it and every call is placed by the scheduler, forwarded to the chosen GPU server with the
// chosen model, streamed back, and its ticket released. Behaviour and its decisions
// (unknown models, num_ctx, errors) are documented in README.md beside this file.
//
//   const proxy = await startProxy({ host: "127.0.0.1", port: 11434, scheduler,
//     providers: () => state.providers.peekAll(), logger, options: { numCtxPolicy: "pin" } });
//   ...
//   await proxy.close(20_000); // drain for up to 20 s, then abort and release what is left

export { createProxyMetrics } from "./metrics.js";
export type { ProxySettings } from "./options.js";
export { startProxy } from "./server.js";
