// Starts the local Ollama/OpenAI proxy on a running sidecar (the `extras` hook of
// startSidecar), so the sidecar command, standalone and the demo wire it the same way.

import { type ListenerLimits, parseHostPort } from "../src/net/index.js";
import type { SidecarContext } from "./main.js";
import type { ProxySettings } from "./proxy/index.js";
import { createProxyMetrics, startProxy } from "./proxy/index.js";

export function proxyExtra(
  listen: string,
  settings: Partial<ProxySettings> = {},
  onAddress?: (address: string) => void,
  limits?: Partial<ListenerLimits>,
) {
  const { host, port } = parseHostPort("--proxy-listen", listen);
  return async (ctx: SidecarContext) => {
    const proxy = await startProxy({
      host,
      port,
      scheduler: ctx.scheduler,
      // Calls read the watched copies directly: no wait on a per-call read. The model lists and
      // the unknown-model check are fleet-wide (docs/rules/state.md §10.1).
      providers: () => ctx.state.providers.peekAll(),
      fleet: () => ctx.state.providers.fleet(),
      models: () => ctx.state.providers.offeredModels(),
      logger: ctx.logger,
      hooks: createProxyMetrics(ctx.registry),
      options: settings,
      ...(limits ? { limits } : {}),
    });
    ctx.logger.info({ listen: proxy.address }, "proxy listening");
    onAddress?.(proxy.address);
    return { close: (drainMs: number) => proxy.close(drainMs) };
  };
}
