import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { footprintMiB, kvSlabMiB, parseModelFlag, resolveModel } from "./catalog.js";
import { loadConfigFile, parseListen, resolveConfig } from "./config.js";
import { FaultSet, parseFaultFlag, validateFaultRules } from "./faults.js";

describe("catalog", () => {
  it("derives parameters, family, context and KV cost from the name", () => {
    const s = resolveModel({ name: "qwen3:8b", onDiskMiB: 4863 });
    expect(s).toMatchObject({
      name: "qwen3:8b",
      family: "qwen3",
      parameterSize: "8.0B",
      contextLength: 40_960,
      weightsMiB: 4863,
      kvMiBPerToken: 0.125,
      quantization: "Q4_K_M",
    });
    expect(s.digest).toMatch(/^[0-9a-f]{64}$/);
    // footprint = weights + num_ctx × num_parallel × kv
    expect(kvSlabMiB(s, 32_768, 1)).toBe(4096);
    expect(footprintMiB(s, 32_768, 2)).toBe(4863 + 8192);
    expect(resolveModel({ name: "qwen3:32b", onDiskMiB: 19_000 }).kvMiBPerToken).toBe(0.25);
    expect(resolveModel({ name: "llama3.1:8b", onDiskMiB: 4700 }).family).toBe("llama");
    expect(resolveModel({ name: "gemma3:270m", onDiskMiB: 292 }).parameterSize).toBe("270.00M");
    // No size in the tag: estimated from the on-disk size at ~4.85 bits per weight.
    expect(resolveModel({ name: "custom", onDiskMiB: 4863 }).name).toBe("custom:latest");
    expect(resolveModel({ name: "custom", onDiskMiB: 4863 }).parameterCount).toBeGreaterThan(8.3e9);
  });

  it("parses --model NAME=MIB[,key=value]", () => {
    expect(parseModelFlag("qwen3:14b=9000")).toEqual({ name: "qwen3:14b", onDiskMiB: 9000 });
    expect(parseModelFlag("m:1b=800,context=8192,kv=0.5,family=x,tps=99")).toEqual({
      name: "m:1b",
      onDiskMiB: 800,
      contextLength: 8192,
      kvMiBPerToken: 0.5,
      family: "x",
      tokensPerS: 99,
    });
    expect(() => parseModelFlag("qwen3:8b")).toThrow(/NAME=ON_DISK_MIB/);
    expect(() => parseModelFlag("qwen3:8b=big")).toThrow(/positive number/);
    expect(() => parseModelFlag("qwen3:8b=10,color=red")).toThrow(/unknown key "color"/);
  });
});

describe("config", () => {
  it("applies Ollama's defaults and the VRAM-based context", () => {
    const c = resolveConfig({ vramMiB: 24_563 });
    expect(c.gpu).toMatchObject({ numParallel: 1, maxQueue: 512, maxLoadedModels: 3, keepAliveMs: 300_000 });
    expect(c.defaultContextLength).toBe(32_768);
    expect(resolveConfig({ vramMiB: 16_000 }).defaultContextLength).toBe(4096);
    expect(resolveConfig({ vramMiB: 48_128 }).defaultContextLength).toBe(262_144);
    expect(resolveConfig({ vramMiB: 48_128, contextLength: 8192 }).defaultContextLength).toBe(8192);
    expect(resolveConfig({ keepAlive: -1 }).gpu.keepAliveMs).toBe(Number.POSITIVE_INFINITY);
    expect(resolveConfig({ keepAlive: "3600" }).gpu.keepAliveMs).toBe(3_600_000);
    expect(c.models.map((m) => m.name)).toEqual(["qwen3:8b", "qwen3:14b"]);
  });

  it("rejects bad values naming the field", () => {
    expect(() => resolveConfig({ numParallel: 0 })).toThrow(/numParallel/);
    expect(() => resolveConfig({ timeScale: -1 })).toThrow(/timeScale/);
    expect(() => resolveConfig({ keepAlive: "soon" })).toThrow(/keepAlive/);
    expect(() => resolveConfig({ models: [{ name: "a", onDiskMiB: -5 }] })).toThrow(/onDiskMiB/);
    expect(() => resolveConfig({ colour: 1 } as never)).toThrow(/colour/);
    expect(() =>
      resolveConfig({
        models: [
          { name: "a", onDiskMiB: 1 },
          { name: "a:latest", onDiskMiB: 2 },
        ],
      }),
    ).toThrow(/twice/);
  });

  it("parses --listen forms", () => {
    expect(parseListen("127.0.0.1:11500")).toEqual({ host: "127.0.0.1", port: 11500 });
    expect(parseListen(":0")).toEqual({ host: "127.0.0.1", port: 0 });
    expect(parseListen("0.0.0.0")).toEqual({ host: "0.0.0.0", port: 11434 });
    expect(parseListen("[::1]:8080")).toEqual({ host: "::1", port: 8080 });
    expect(parseListen("http://localhost:9")).toEqual({ host: "localhost", port: 9 });
    expect(() => parseListen("host:port")).toThrow(/HOST:PORT/);
  });

  it("reads YAML config files, models as a map or a list", async () => {
    const dir = await mkdtemp(join(tmpdir(), "emu-config-"));
    const yaml = join(dir, "emu.yaml");
    await writeFile(
      yaml,
      "vramMiB: 16384\nnumParallel: 2\nkeepAlive: 10m\nmodels:\n  qwen3:8b: 4863\n  big:70b: { onDiskMiB: 40000 }\nfaults:\n  - kind: delay\n    ms: 5\n",
    );
    const opts = await loadConfigFile(yaml);
    const c = resolveConfig(opts);
    expect(c.gpu.vramMiB).toBe(16_384);
    expect(c.gpu.numParallel).toBe(2);
    expect(c.gpu.keepAliveMs).toBe(600_000);
    expect(c.models.map((m) => m.name)).toEqual(["qwen3:8b", "big:70b"]);
    expect(c.faults).toEqual([{ kind: "delay", ms: 5 }]);
    const bad = join(dir, "bad.yaml");
    await writeFile(bad, "vramMiB: 1\nturbo: true\n");
    await expect(loadConfigFile(bad)).rejects.toThrow(/unknown option "turbo"/);
    await expect(loadConfigFile(join(dir, "missing.yaml"))).rejects.toThrow(/missing.yaml/);
  });
});

describe("faults", () => {
  it("parses --fault KIND[:k=v,...] and validates rules", () => {
    expect(parseFaultFlag("error:count=2,status=503")).toEqual({ kind: "error", count: 2, status: 503 });
    expect(parseFaultFlag("stall:after=3,ms=5000")).toEqual({ kind: "stall", afterTokens: 3, ms: 5000 });
    expect(parseFaultFlag("refuse")).toEqual({ kind: "refuse" });
    expect(parseFaultFlag("error:model=qwen3:8b")).toEqual({ kind: "error", model: "qwen3:8b" });
    expect(() => parseFaultFlag("explode")).toThrow(/kind/);
    expect(() => parseFaultFlag("error:count=x")).toThrow(/count/);
    expect(() => validateFaultRules([{ kind: "delay", ms: -1 }])).toThrow(/faults\[0\]\.ms/);
    expect(() => validateFaultRules([{ kind: "error", probability: 2 }])).toThrow(/probability/);
    expect(() => validateFaultRules({ kind: "error" })).toThrow(/array/);
  });

  it("spends counts, filters by model and path, and draws probabilities from the seed", () => {
    const set = new FaultSet([{ kind: "error", count: 2, model: "m:latest" }]);
    expect(set.take("error", { path: "/api/chat", model: "other" })).toBeUndefined();
    expect(set.take("error", { path: "/api/chat", model: "m:latest" })).toBeDefined();
    expect(set.take("error", { path: "/api/chat", model: "m:latest" })).toBeDefined();
    expect(set.take("error", { path: "/api/chat", model: "m:latest" })).toBeUndefined();
    expect(set.list()).toEqual([]);

    const draws = (seed: number) => {
      const s = new FaultSet([{ kind: "error", probability: 0.5 }], seed);
      return Array.from({ length: 200 }, () => (s.take("error", { path: "/" }) ? 1 : 0)).join("");
    };
    expect(draws(7)).toBe(draws(7));
    const hits = [...draws(7)].filter((c) => c === "1").length;
    expect(hits).toBeGreaterThan(60);
    expect(hits).toBeLessThan(140);
    const pathOnly = new FaultSet([{ kind: "delay", path: "/api/ps" }]);
    expect(pathOnly.take("delay", { path: "/api/tags" })).toBeUndefined();
    expect(pathOnly.take("delay", { path: "/api/ps" })).toBeDefined();
  });
});
