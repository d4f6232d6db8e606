// Engine personalities of the emulator: vLLM, llama.cpp server and SGLang over the same GPU
// model (src/emulator/README.md, "Engine personalities").
import type { ServerResponse } from "node:http";
import type { Clock } from "../clock.js";
import type { ResolvedConfig } from "../config.js";
import type { RequestContext } from "../core.js";
import { FixedModelGpu } from "./fixed-gpu.js";
import { llamacppRoutes } from "./llamacpp.js";
import { engineMetrics } from "./metrics.js";
import { sendNotFound } from "./openai-routes.js";
import { type Personality, resolvePersonality } from "./personality.js";
import { sglangRoutes } from "./sglang.js";
import { vllmRoutes } from "./vllm.js";

export { DEFAULT_SLOTS, ENGINE_LABELS, type Personality } from "./personality.js";

export interface EngineServer {
  readonly personality: Personality;
  readonly gpu: FixedModelGpu;
  route(method: string, path: string): ((ctx: RequestContext) => Promise<void>) | undefined;
  notFound(res: ServerResponse): void;
}

/** The GPU model and routes of the configured personality (throws on what the engine refuses). */
export function engineServer(config: ResolvedConfig, clock: Clock): EngineServer {
  const personality = resolvePersonality(config);
  const gpu = new FixedModelGpu(personality.spec, personality.gpu, clock);
  const pc = { p: personality, gpu };
  const metrics = engineMetrics(personality, gpu);
  const routes =
    personality.engine === "vllm"
      ? vllmRoutes(pc, metrics)
      : personality.engine === "llamacpp"
        ? llamacppRoutes(pc, metrics)
        : sglangRoutes(pc, metrics);
  return {
    personality,
    gpu,
    route: routes,
    notFound: (res) => sendNotFound(personality, res),
  };
}
