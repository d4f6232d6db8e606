// Reading framebuffer memory from a DCGM exporter's /metrics (Prometheus text format):
// DCGM_FI_DEV_FB_TOTAL / _USED / _FREE (and _RESERVED when present), MiB, summed over GPUs.
import type { Agent, Dispatcher } from "undici";
import { EngineError } from "./errors.js";
import { call, clientAgent } from "./http.js";
import { readPromSamples } from "./prom-text.js";

export interface DcgmFramebuffer {
  /** Total framebuffer MiB over all GPUs (from _TOTAL, else used + free + reserved). */
  totalMiB: number;
  usedMiB: number;
  freeMiB: number;
  /** GPUs seen (distinct `gpu` or `UUID` labels). */
  gpus: number;
}

const FB = /^DCGM_FI_DEV_FB_(?:TOTAL|USED|FREE|RESERVED)$/;

/** Parses exporter text; returns undefined when no framebuffer series is present. */
export function parseDcgmMetrics(text: string): DcgmFramebuffer | undefined {
  const sums: Record<string, number> = {};
  const gpus = new Set<string>();
  let seen = false;
  for (const s of readPromSamples(text, (name) => FB.test(name))) {
    if (!Number.isFinite(s.value)) continue;
    seen = true;
    sums[s.name] = (sums[s.name] ?? 0) + s.value;
    gpus.add(s.labels.UUID ?? s.labels.gpu ?? JSON.stringify(s.labels));
  }
  if (!seen) return undefined;
  const used = sums.DCGM_FI_DEV_FB_USED ?? 0;
  const free = sums.DCGM_FI_DEV_FB_FREE ?? 0;
  const total = sums.DCGM_FI_DEV_FB_TOTAL ?? used + free + (sums.DCGM_FI_DEV_FB_RESERVED ?? 0);
  return {
    totalMiB: Math.round(total),
    usedMiB: Math.round(used),
    freeMiB: Math.round(free),
    gpus: gpus.size,
  };
}

export interface DcgmReaderOptions {
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
}

let sharedAgent: Agent | undefined;

/** GET a DCGM exporter's metrics URL (e.g. http://host:9400/metrics) and parse it. */
export async function readDcgmFramebuffer(
  url: string,
  opts: DcgmReaderOptions = {},
): Promise<DcgmFramebuffer> {
  const parsed = new URL(url);
  const timeoutMs = opts.timeoutMs ?? 5000;
  sharedAgent ??= clientAgent(5000);
  const res = await call(opts.dispatcher ?? sharedAgent, parsed.origin, {
    method: "GET",
    path: parsed.pathname + parsed.search,
    timeoutMs,
    signal: opts.signal,
    headers: { accept: "text/plain" },
  });
  const operation = `GET ${parsed.pathname}`;
  if (res.status >= 400) {
    throw new EngineError("http", `${res.status}`, {
      endpoint: parsed.origin,
      operation,
      status: res.status,
    });
  }
  const fb = parseDcgmMetrics(res.text);
  if (!fb) {
    throw new EngineError("protocol", "no DCGM_FI_DEV_FB_* series in the metrics", {
      endpoint: parsed.origin,
      operation,
    });
  }
  return fb;
}
