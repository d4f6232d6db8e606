// The emulator's own routes, under /_emulator/ (never faulted): the GPU's state, fault rules
// and reset.
//   GET    /_emulator/state    resident models (footprints, state, slots), queue, VRAM, faults
//   GET    /_emulator/faults   the fault rules in force
//   POST   /_emulator/faults   replace them: {"faults": [rule, ...]} (or a bare array)
//   DELETE /_emulator/faults   clear them
//   POST   /_emulator/reset    drop every model and request at once and clear the faults
//   GET    /_emulator/traces   the W3C trace context (traceparent, tracestate) of the latest requests

import { sendJson } from "../net/index.js";
import { type EmulatorCore, isoAt, type RequestContext, readRequestBody } from "./core.js";
import { type FaultRule, validateFaultRules } from "./faults.js";
import { formatDurationMs } from "./go-duration.js";
import { HttpError, sendError } from "./http-util.js";

export interface EmulatorModelState {
  name: string;
  state: "loading" | "ready" | "unloading";
  numCtx: number;
  footprintMiB: number;
  weightsMiB: number;
  kvMiB: number;
  /** Requests in a slot. */
  active: number;
  /** Requests assigned to this model waiting for a slot (or for its load). */
  waiting: number;
  keepAlive: string;
  /** RFC 3339 (wall clock); null = never. */
  expiresAt: string | null;
}

export interface EmulatorState {
  /** RFC 3339 wall clock. */
  now: string;
  /** Emulated ms since start. */
  emulatedMs: number;
  timeScale: number;
  vramMiB: number;
  usedMiB: number;
  freeMiB: number;
  numParallel: number;
  contextLength: number;
  models: EmulatorModelState[];
  pending: Array<{ id: number; model: string; numCtx: number; kind: string; waitedMs: number }>;
  activeCount: number;
  queueDepth: number;
  faults: FaultRule[];
}

export function emulatorState(core: EmulatorCore): EmulatorState {
  const s = core.gpu.snapshot();
  return {
    now: isoAt(core, s.now),
    emulatedMs: s.now,
    timeScale: core.config.timeScale,
    vramMiB: s.vramMiB,
    usedMiB: s.usedMiB,
    freeMiB: s.freeMiB,
    numParallel: s.numParallel,
    contextLength: s.defaultContextLength,
    models: s.runners.map((r) => ({
      name: r.model,
      state: r.state,
      numCtx: r.numCtx,
      footprintMiB: r.footprintMiB,
      weightsMiB: r.weightsMiB,
      kvMiB: r.kvMiB,
      active: r.active,
      waiting: r.waiting,
      keepAlive: formatDurationMs(r.keepAliveMs),
      expiresAt: Number.isFinite(r.expiresAt) ? isoAt(core, r.expiresAt) : null,
    })),
    pending: s.pending.map((p) => ({
      id: p.id,
      model: p.model,
      numCtx: p.numCtx,
      kind: p.kind,
      waitedMs: s.now - p.arrivedAt,
    })),
    activeCount: s.activeCount,
    queueDepth: s.queueDepth,
    faults: core.faults.list(),
  };
}

export async function handleAdmin(ctx: RequestContext): Promise<void> {
  const { core, res, path, method } = ctx;
  if (path === "/_emulator/state" && (method === "GET" || method === "HEAD")) {
    sendJson(res, 200, emulatorState(core));
    return;
  }
  if (path === "/_emulator/traces" && method === "GET") {
    sendJson(res, 200, { traces: core.traces });
    return;
  }
  if (path === "/_emulator/faults") {
    if (method === "GET") {
      sendJson(res, 200, { faults: core.faults.list() });
      return;
    }
    if (method === "DELETE") {
      core.faults.set([]);
      sendJson(res, 200, { faults: [] });
      core.faultsChanged();
      return;
    }
    if (method === "POST" || method === "PUT") {
      const buf = await readRequestBody(ctx);
      let raw: unknown;
      try {
        raw = JSON.parse(buf.toString("utf8"));
      } catch (err) {
        throw new HttpError(400, `invalid JSON in request body: ${(err as Error).message}`);
      }
      const list = Array.isArray(raw) ? raw : (raw as { faults?: unknown } | null)?.faults;
      let rules: FaultRule[];
      try {
        rules = validateFaultRules(list);
      } catch (err) {
        throw new HttpError(400, (err as Error).message);
      }
      core.faults.set(rules);
      // Answer first: a refuse rule closes the listener right after.
      res.on("finish", () => core.faultsChanged());
      sendJson(res, 200, { faults: core.faults.list() });
      return;
    }
  }
  if (path === "/_emulator/reset" && method === "POST") {
    await readRequestBody(ctx);
    core.gpu.reset();
    core.faults.set([]);
    core.faultsChanged();
    sendJson(res, 200, { reset: true });
    return;
  }
  sendError(res, 404, `no emulator route ${method} ${path}`);
}
