// The traced case of bench proxy (docs/benchmarks.md, issue 34): what tracing every call costs
// the proxy. A second sidecar process, the same as the untraced one in front of the same emulator
// but with the tracing SDK started as a real sidecar starts it (100 % sampling, OTLP/HTTP
// protobuf to a local sink that answers 200: bench/lib/otlp-sink.ts), against the untraced one
// in paired rounds on the Ollama streaming path: 1 stream (the TTFB tracing adds) and 32 streams
// (the tokens/s ratio). The sink's counts show that the spans really went out: none is a failure.
import type { Dispatcher } from "undici";
import { startOtlpSink } from "../lib/otlp-sink.js";
import { type Child, startChild, stopChild } from "./children.js";
import { type CaseResult, round, runCase } from "./ollama-case.js";

/** traced ÷ untraced tokens/s at 32 streams, at least (issue 34). */
export const TRACED_TARGET = 0.95;

/** Long enough for the traced child to flush its queued spans as it exits. */
const FLUSH_GRACE_MS = 15_000;

export interface TracedResult {
  /** 1 stream: "direct" is the untraced proxy, "proxy" the traced one. */
  c1: CaseResult;
  /** 32 streams, likewise. */
  c32: CaseResult;
  /** OTLP export requests the sink received, and their body bytes (the traced child's exit flush included). */
  exports: number;
  bytes: number;
}

/**
 * Starts the sink and a traced sidecar with `childArgs` (the untraced sidecar's), warms it, and
 * runs the paired rounds against `untraced` (that sidecar's proxy URL).
 */
export async function runTracedCase(
  dispatcher: Dispatcher,
  untraced: string,
  childArgs: object,
  rounds: number,
  shortTokens: number,
): Promise<TracedResult> {
  const sink = await startOtlpSink();
  let traced: Child | undefined;
  try {
    traced = await startChild("proxy-child.js", { ...childArgs, traceEndpoint: sink.url });
    // Warm-up as for the untraced sidecar (the model is already loaded): connections, the SDK's paths.
    await round(dispatcher, traced.url, 1, 0, shortTokens);
    await round(dispatcher, traced.url, 4, 0, shortTokens);
    const c1 = await runCase(dispatcher, untraced, traced.url, 1, rounds * 5, shortTokens);
    const c32 = await runCase(dispatcher, untraced, traced.url, 32, rounds, 0);
    // Stopping the child shuts its SDK down, which exports what is still queued.
    await stopChild(traced, FLUSH_GRACE_MS);
    traced = undefined;
    const { exports, bytes } = sink.stats();
    if (exports === 0) {
      throw new Error("bench proxy, traced case: the traced sidecar exported nothing to the OTLP sink");
    }
    return { c1, c32, exports, bytes };
  } finally {
    if (traced) await stopChild(traced);
    await sink.close();
  }
}
