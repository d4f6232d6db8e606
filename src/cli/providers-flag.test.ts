// --provider NAME=URL[,options]: the engine option beside the existing ones.
import { describe, expect, it } from "vitest";
import { parseProviderFlag } from "./providers-flag.js";

describe("parseProviderFlag", () => {
  it("reads the existing options; no engine stays absent (Ollama)", () => {
    expect(
      parseProviderFlag(
        "gpu-a=http://a:11434,vram=24563,parallel=2,context=8192,loaded=2,dcgm=http://a:9400/metrics",
      ),
    ).toEqual({
      name: "gpu-a",
      endpoint: "http://a:11434",
      totalVramMiB: 24563,
      maxParallel: 2,
      contextLength: 8192,
      maxLoadedModels: 2,
      dcgmUrl: "http://a:9400/metrics",
    });
  });

  it.each(["vllm", "llamacpp", "sglang", "openai"] as const)("engine=%s", (engine) => {
    expect(parseProviderFlag(`v=http://v:8000,engine=${engine},parallel=64`)).toEqual({
      name: "v",
      endpoint: "http://v:8000",
      engine,
      maxParallel: 64,
    });
  });

  it("engine=ollama is the default, so it is left out", () => {
    expect(parseProviderFlag("o=http://o:11434,engine=ollama")).toEqual({
      name: "o",
      endpoint: "http://o:11434",
    });
  });

  it("an unknown engine is refused, naming the flag and the engines", () => {
    expect(() => parseProviderFlag("v=http://v:8000,engine=tgi")).toThrow(
      /--provider "v=http:\/\/v:8000,engine=tgi": engine: expected one of ollama, vllm, llamacpp, sglang, openai, got "tgi"/,
    );
  });
});
