// One provider's prober for a fixed-model engine: runs that engine's probe and, when the probe
// finds the engine's own routes missing, asks which engine answers instead, so that a wrong
// `spec.engine` is reported as such (EngineMismatchError) rather than as a provider down.
import type { Engine } from "../core/index.js";
import { EngineHttp, type EngineHttpOptions } from "./engine-http.js";
import {
  detectEngine,
  EngineMismatchError,
  type EngineProbe,
  type FixedEngine,
  type ProbeMemo,
} from "./engine-probe.js";
import { isEngineError } from "./errors.js";
import { probeLlamaCpp } from "./llamacpp-probe.js";
import { probeOpenAi } from "./openai-probe.js";
import { probeSglang } from "./sglang-probe.js";
import { probeVllm } from "./vllm-probe.js";

export class EngineProber {
  readonly engine: FixedEngine;
  readonly http: EngineHttp;
  private readonly memo: ProbeMemo = {};

  constructor(engine: FixedEngine, o: EngineHttpOptions) {
    this.engine = engine;
    this.http = new EngineHttp(o);
  }

  /** Probes once; throws EngineError (kind "mismatch" when another engine answers). */
  async probe(): Promise<EngineProbe> {
    try {
      return await this.run();
    } catch (err) {
      throw await mismatchOr(this.http, this.engine, err);
    }
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private run(): Promise<EngineProbe> {
    switch (this.engine) {
      case "vllm":
        return probeVllm(this.http, this.memo);
      case "llamacpp":
        return probeLlamaCpp(this.http, this.memo);
      case "sglang":
        return probeSglang(this.http, this.memo);
      case "openai":
        return probeOpenAi(this.http);
    }
  }
}

/**
 * After a failed probe of `declared`: an EngineMismatchError when the failure was an answer
 * (an error status or an unexpected shape, not silence) and another engine is detected;
 * otherwise the original error. A server that answers nothing is down, not mismatched. Any
 * engine is an OpenAI-compatible server, so `openai` detected never contradicts a declaration
 * of vllm, llamacpp or sglang (their own routes may simply be turned off).
 */
export async function mismatchOr(http: EngineHttp, declared: Engine, err: unknown): Promise<unknown> {
  if (err instanceof EngineMismatchError) return err;
  if (!isEngineError(err, "http") && !isEngineError(err, "protocol")) return err;
  const detected = await detectEngine(http);
  if (detected === undefined || detected === declared) return err;
  if (detected === "openai" && declared !== "ollama") return err;
  return new EngineMismatchError(http.baseUrl, declared, detected);
}
