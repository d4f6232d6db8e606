// What the HTTP handlers share: the resolved configuration, the GPU model, the clock, the
// catalog and the fault rules.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ModelSpec } from "./catalog.js";
import type { Clock } from "./clock.js";
import type { ResolvedConfig } from "./config.js";
import type { FaultSet } from "./faults.js";
import type { EmulatorGpu } from "./gpu-types.js";
import { readBody } from "./http-util.js";

export interface EmulatorCore {
  readonly config: ResolvedConfig;
  readonly gpu: EmulatorGpu;
  readonly clock: Clock;
  readonly catalog: ReadonlyMap<string, ModelSpec>;
  readonly faults: FaultSet;
  /** Wall ms at start (the models' modified_at). */
  readonly startedAt: number;
  /** Called after the fault rules changed (to start or stop refusing connections). */
  faultsChanged(): void;
  nextCompletionId(): number;
  /** The W3C trace context the latest requests carried (newest last, bounded): tests read it. */
  readonly traces: TraceSeen[];
}

/** One request's `traceparent` (and `tracestate`), as received. */
export interface TraceSeen {
  path: string;
  traceparent: string;
  tracestate?: string;
}

export interface RequestContext {
  readonly core: EmulatorCore;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly path: string;
  readonly method: string;
}

/** Wall-clock RFC 3339 timestamp of emulated time `t` (default now). */
export function isoAt(core: EmulatorCore, t = core.clock.now()): string {
  return new Date(core.clock.wallTimeOf(t)).toISOString();
}

/** Waits `ms` of emulated time. */
export function sleepEmulated(core: EmulatorCore, ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (ms === Number.POSITIVE_INFINITY) return; // never: the connection is held until closed
    core.clock.at(core.clock.now() + ms, resolve);
  });
}

export async function readRequestBody(ctx: RequestContext): Promise<Buffer> {
  return readBody(ctx.req, ctx.core.config.maxBodyBytes);
}

/**
 * Applies the request-level faults (reset, delay, error) to a request; returns true when
 * the request has been answered (or cut) by a fault and must not be handled further.
 */
export async function applyRequestFaults(ctx: RequestContext, model?: string): Promise<boolean> {
  const { core, res, path } = ctx;
  const fctx = { path, model };
  if (core.faults.take("reset", fctx)) {
    res.socket?.destroy();
    return true;
  }
  const delay = core.faults.take("delay", fctx);
  if (delay) await sleepEmulated(core, delay.ms ?? 1000);
  if (res.destroyed) return true;
  const error = core.faults.take("error", fctx);
  if (error) {
    const status = error.status ?? 500;
    const message = error.message ?? "emulated fault: internal server error";
    if (path.startsWith("/v1/")) {
      res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ error: { message, type: "api_error", param: null, code: null } }));
    } else {
      res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ error: message }));
    }
    return true;
  }
  return false;
}
