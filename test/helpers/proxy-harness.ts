// An in-process sidecar around the proxy, for the proxy's tests: an embedded memory state
// store, the provider publisher probing emulators over real HTTP, a Scheduler with
// Ollama-client ProviderOps, and the proxy itself.

import { ollamaOps } from "../../sidecar/ollama-ops.js";
import type { ProxyHooks, ProxySettings } from "../../sidecar/proxy/options.js";
import { type ProxyServer, startProxy } from "../../sidecar/proxy/server.js";
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";
import type { Logger } from "../../src/log/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { Scheduler, schedulerConfigFromEnv } from "../../src/scheduler/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";

export interface HarnessProvider extends EmulatorOptions {
  name: string;
  /** Parallel slots published (and the emulator's numParallel); default 1. */
  maxParallel?: number;
}

export interface HarnessOptions {
  providers?: HarnessProvider[];
  /** Environment for schedulerConfigFromEnv (merged over the defaults below). */
  env?: NodeJS.ProcessEnv;
  proxy?: Partial<ProxySettings>;
  hooks?: ProxyHooks;
  logger?: Logger;
  /** Publisher probe interval (ms); default 250. */
  probeIntervalMs?: number;
}

export interface Harness {
  state: StateStore;
  publisher: ProviderPublisher;
  scheduler: Scheduler;
  proxy: ProxyServer;
  /** The proxy's base URL. */
  url: string;
  emulators: Map<string, EmulatorHandle>;
  emulator(name: string): EmulatorHandle;
  /** Starts another proxy on the same scheduler (other settings). */
  extraProxy(settings: Partial<ProxySettings>): Promise<ProxyServer>;
  /** Every ticket in the shared state, over all providers. */
  tickets(): Promise<Array<{ provider: string; ticketId: string; modelName: string }>>;
  close(): Promise<void>;
}

/**
 * A homelab catalog (on-disk MiB) sized for the default 32768-token context of both cards:
 * 32b (27192 MiB loaded) fits only the 5090; 14b (16416) and 8b (8996) do not fit the 4090
 * together, even by the on-disk × 1.2 estimate; 235b fits nowhere.
 */
export const HOMELAB_MODELS = {
  "qwen3:32b": 19_000,
  "qwen3:14b": 11_000,
  "qwen3:8b": 4900,
  "qwen3:235b": 140_000,
};

export const HOMELAB: HarnessProvider[] = [
  { name: "rtx5090", vramMiB: 32_605, models: HOMELAB_MODELS },
  { name: "rtx4090", vramMiB: 24_563, models: HOMELAB_MODELS },
];

export const HARNESS_ENV: NodeJS.ProcessEnv = {
  KUBEMOOT_NAMESPACE: "crew",
  KUBEMOOT_AGENT_NAME: "tooler",
  KUBEMOOT_MODEL_CANDIDATES_MULLING: JSON.stringify([
    { model: "qwen3:8b", score: 75 },
    { model: "qwen3:14b", score: 70 },
  ]),
  KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS: "20",
};

export async function startHarness(o: HarnessOptions = {}): Promise<Harness> {
  const providers = o.providers ?? HOMELAB;
  const emulators = new Map<string, EmulatorHandle>();
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    for (const p of providers) {
      const { name, maxParallel, ...emu } = p;
      const handle = await startEmulator({
        listen: "127.0.0.1:0",
        timeScale: 0.01,
        numParallel: maxParallel ?? 1,
        ...emu,
      });
      emulators.set(name, handle);
      closers.push(() => handle.close());
    }
    const state = await openStateStore("memory");
    closers.push(() => state.close());
    const publisher = new ProviderPublisher({
      sink: state.providerWriter,
      intervalMs: o.probeIntervalMs ?? 250,
    });
    closers.push(() => publisher.stop());
    await publisher.setProviders(
      providers.map((p) => {
        const e = emulators.get(p.name) as EmulatorHandle;
        return {
          name: p.name,
          endpoint: e.url,
          totalVramMiB: e.config.gpu.vramMiB,
          maxParallel: p.maxParallel ?? 1,
          contextLength: e.config.defaultContextLength,
        };
      }),
    );
    publisher.start();
    await publisher.probeNow();
    const ops = ollamaOps();
    closers.push(() => ops.close());
    const config = schedulerConfigFromEnv({ ...HARNESS_ENV, ...o.env });
    const scheduler = new Scheduler({ state, config, ops });
    closers.push(() => scheduler.close());
    const proxyCommon = {
      host: "127.0.0.1",
      port: 0,
      scheduler,
      providers: () => state.providers.peekAll(),
      ...(o.logger ? { logger: o.logger } : {}),
      ...(o.hooks ? { hooks: o.hooks } : {}),
    };
    const proxy = await startProxy({ ...proxyCommon, ...(o.proxy ? { options: o.proxy } : {}) });
    closers.push(() => proxy.close(0));
    return {
      state,
      publisher,
      scheduler,
      proxy,
      url: `http://127.0.0.1:${proxy.port}`,
      emulators,
      emulator(name) {
        const e = emulators.get(name);
        if (!e) throw new Error(`no emulator ${name}`);
        return e;
      },
      async extraProxy(settings) {
        const p = await startProxy({ ...proxyCommon, options: { ...o.proxy, ...settings } });
        closers.push(() => p.close(0));
        return p;
      },
      async tickets() {
        const all = await state.tickets.allTickets();
        return [...all.values()].flat().map((t) => ({
          provider: t.provider,
          ticketId: t.ticketId,
          modelName: t.modelName,
        }));
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
