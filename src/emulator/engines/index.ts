// Engine personalities of the emulator: vLLM, llama.cpp server and SGLang over the same GPU
// model (src/emulator/README.md, "Engine personalities").
import type { ServerResponse } from "node:http";
import type { Clock } from "../clock.js";
import type { ResolvedConfig } from "../config.js";
import { FixedModelGpu } from "./fixed-gpu.js";
import { llamacppRoutes } from "./llamacpp.js";
import { engineMetrics } from "./metrics.js";
import {
  type Handler,
  type PersonalityContext,
  type PersonalityRoutes,
  personalityRoutes,
  sendNotFound,
} from "./openai-routes.js";
import { type Personality, type PersonalityEngine, resolvePersonality } from "./personality.js";
import { sglangRoutes } from "./sglang.js";
import { vllmRoutes } from "./vllm.js";

/** Each engine's own routes; personalityRoutes serves the ones they share. */
const OWN_ROUTES: Record<PersonalityEngine, (pc: PersonalityContext) => Record<string, Handler>> = {
  vllm: vllmRoutes,
  llamacpp: llamacppRoutes,
  sglang: sglangRoutes,
};

interface EngineServer {
  readonly personality: Personality;
  readonly gpu: FixedModelGpu;
  route: PersonalityRoutes;
  notFound(res: ServerResponse): void;
}

/** The GPU model and routes of the configured personality (throws on what the engine refuses). */
export function engineServer(config: ResolvedConfig, clock: Clock): EngineServer {
  const personality = resolvePersonality(config);
  const gpu = new FixedModelGpu(personality.spec, personality.gpu, clock);
  const pc = { p: personality, gpu };
  const route = personalityRoutes(pc, engineMetrics(personality, gpu), OWN_ROUTES[personality.engine](pc));
  return {
    personality,
    gpu,
    route,
    notFound: (res) => sendNotFound(personality, res),
  };
}
