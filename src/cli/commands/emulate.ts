import type { EmulatorOptions, ModelConfig } from "../../emulator/index.js";
import { invalidArgument } from "../../errors/index.js";
import type { Command, FlagValues } from "../command.js";

// `kubemoot-scheduler emulate`: an Ollama-API emulator over one simulated GPU.
// Precedence: flags (or their OLLAMA_* variables) over the --config file over the defaults.

const NUMBER_FLAGS: Record<string, { key: string; integer?: boolean }> = {
  "vram-mib": { key: "vramMiB" },
  "num-parallel": { key: "numParallel", integer: true },
  "context-length": { key: "contextLength", integer: true },
  "time-scale": { key: "timeScale" },
  "load-mib-per-s": { key: "loadMiBPerS" },
  "unload-ms": { key: "unloadMs" },
  "tokens-per-s": { key: "tokensPerS" },
  "prompt-tokens-per-s": { key: "promptTokensPerS" },
  "output-tokens": { key: "outputTokens", integer: true },
  "max-queue": { key: "maxQueue", integer: true },
  "max-loaded-models": { key: "maxLoadedModels", integer: true },
  "max-body-bytes": { key: "maxBodyBytes", integer: true },
  seed: { key: "seed", integer: true },
  slots: { key: "slots", integer: true },
  "kv-cache-tokens": { key: "kvCacheTokens", integer: true },
};

function numberFlag(name: string, text: string, integer: boolean): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw invalidArgument(`--${name}`, `expected ${integer ? "an integer" : "a number"}, got "${text}"`);
  }
  return n;
}

function list(v: FlagValues[string]): string[] {
  if (Array.isArray(v)) return v;
  return typeof v === "string" && v !== "" ? [v] : [];
}

export const command: Command = {
  name: "emulate",
  summary: "an Ollama-API emulator over a simulated GPU (VRAM, load time, slots, context, keep_alive)",
  details: [
    "Serves /api/chat, /api/generate, /api/ps, /api/tags, /api/show, /api/version,",
    "/api/embed, /api/embeddings, /v1/chat/completions, /v1/embeddings and /v1/models, plus",
    "/_emulator/state, /_emulator/faults and",
    "/_emulator/reset (and DCGM-style /metrics with --dcgm). A model's footprint at load is",
    "its on-disk size plus a KV slab of num_ctx × num_parallel × kv MiB/token. Times in",
    "the answers are emulated: --time-scale 0.01 runs everything 100× faster.",
    "",
    "--model NAME=ON_DISK_MIB[,context=N,kv=MIB_PER_TOKEN,family=F,params=8.2B,quant=Q,weights=MIB,tps=N,",
    "  dims=N (an embedding model's vector length),caps=completion+tools+thinking|embedding]",
    "  nomic-embed-text, mxbai-embed-large, all-minilm, bge-m3… are embedding models by name;",
    "  format, tools, think and embeddings are described in src/emulator/README.md",
    "--fault KIND[:key=value,...] with KIND refuse|reset|delay|error|drop|error-mid-stream|stall",
    "  and keys probability, count, ms, afterTokens, status, message, model, path;",
    "  e.g. --fault error:count=2  --fault stall:afterTokens=3,ms=5000  --fault delay:ms=200",
    "",
    "--engine vllm|llamacpp|sglang plays that engine instead of Ollama: one --model, loaded at start",
    "  and never unloaded, --slots concurrent requests, a KV cache of --kv-cache-tokens tokens, a",
    "  first-come queue, the engine's routes (/v1/*, /health, /tokenize, /metrics in its own names;",
    "  llama.cpp /props and /slots; SGLang /get_model_info and /get_server_info) and no /api/*.",
    "  --context-length is its context limit (default the model's own). See src/emulator/README.md.",
  ].join("\n"),
  flags: {
    listen: {
      type: "string",
      env: "OLLAMA_HOST",
      description: "address to serve on (default 127.0.0.1:11434)",
      value: "HOST:PORT",
    },
    config: { type: "string", description: "YAML or JSON file of emulator options", value: "FILE" },
    "vram-mib": { type: "string", description: "total VRAM of the emulated GPU (default 24576)", value: "N" },
    model: {
      type: "string",
      multiple: true,
      description: "a model on disk (default qwen3:8b=4863 and qwen3:14b=9000)",
      value: "NAME=ON_DISK_MIB",
    },
    "num-parallel": {
      type: "string",
      env: "OLLAMA_NUM_PARALLEL",
      description: "slots per loaded model (default 1)",
      value: "N",
    },
    "context-length": {
      type: "string",
      env: "OLLAMA_CONTEXT_LENGTH",
      description: "default num_ctx; 0 picks by VRAM like Ollama (default 0)",
      value: "N",
    },
    "time-scale": {
      type: "string",
      description: "wall time per emulated time, e.g. 0.01 (default 1)",
      value: "X",
    },
    "load-mib-per-s": { type: "string", description: "load speed (default 1024)", value: "N" },
    "unload-ms": {
      type: "string",
      description: "emulated ms an unload holds VRAM (default 1000)",
      value: "N",
    },
    "tokens-per-s": { type: "string", description: "generation speed (default 50)", value: "N" },
    "prompt-tokens-per-s": {
      type: "string",
      description: "prompt evaluation speed (default 2000)",
      value: "N",
    },
    "output-tokens": {
      type: "string",
      description: "answer length when num_predict allows (default 32)",
      value: "N",
    },
    "max-queue": {
      type: "string",
      env: "OLLAMA_MAX_QUEUE",
      description: "queued requests before 503 (default 512)",
      value: "N",
    },
    "max-loaded-models": {
      type: "string",
      env: "OLLAMA_MAX_LOADED_MODELS",
      description: "models loaded at once, 0 = unlimited (default 3)",
      value: "N",
    },
    "keep-alive": {
      type: "string",
      env: "OLLAMA_KEEP_ALIVE",
      description: "default keep_alive, Go duration or seconds; negative = forever (default 5m)",
      value: "DURATION",
    },
    fault: {
      type: "string",
      multiple: true,
      description: "inject a fault from the start",
      value: "KIND[:k=v,...]",
    },
    dcgm: { type: "boolean", description: "serve DCGM-exporter-style /metrics (FB total/used/free MiB)" },
    "max-body-bytes": { type: "string", description: "largest request body (default 8388608)", value: "N" },
    seed: { type: "string", description: "seed of probabilistic faults (default 1)", value: "N" },
    engine: {
      type: "string",
      description: "engine to play: ollama, vllm, llamacpp or sglang (default ollama)",
      value: "ENGINE",
    },
    "engine-version": {
      type: "string",
      description: "metric names of current or legacy engine releases (default current)",
      value: "current|legacy",
    },
    slots: {
      type: "string",
      description: "engine personality: concurrent requests (default vllm 256, sglang 128, llamacpp 4)",
      value: "N",
    },
    "kv-cache-tokens": {
      type: "string",
      description: "engine personality: KV-cache tokens (default from VRAM; llamacpp: the context length)",
      value: "N",
    },
  },
  async run(flags) {
    const emulator = await import("../../emulator/index.js");
    const fromFile = typeof flags.config === "string" ? await emulator.loadConfigFile(flags.config) : {};
    const options: Record<string, unknown> = { ...fromFile };
    if (typeof flags.listen === "string") options.listen = flags.listen;
    for (const [name, { key, integer }] of Object.entries(NUMBER_FLAGS)) {
      const v = flags[name];
      if (typeof v === "string") options[key] = numberFlag(name, v, integer === true);
    }
    if (typeof flags["keep-alive"] === "string") options.keepAlive = flags["keep-alive"];
    if (flags.dcgm === true) options.dcgm = true;
    if (typeof flags.engine === "string") options.engine = flags.engine;
    if (typeof flags["engine-version"] === "string") options.engineVersion = flags["engine-version"];
    const modelFlags = list(flags.model);
    if (modelFlags.length > 0) {
      // Flags add to the file's catalog (not to the built-in one) and win on the same name.
      const merged = new Map<string, ModelConfig>();
      const fileModels = fromFile.models === undefined ? [] : emulator.modelList(fromFile.models);
      for (const cfg of [...fileModels, ...modelFlags.map(emulator.parseModelFlag)]) {
        merged.set(emulator.resolveModel(cfg).name, cfg);
      }
      options.models = [...merged.values()];
    }
    const faultFlags = list(flags.fault);
    if (faultFlags.length > 0) {
      options.faults = [
        ...((fromFile.faults as unknown[]) ?? []),
        ...faultFlags.map(emulator.parseFaultFlag),
      ];
    }
    // Listen for the signals before announcing the address, so that a signal sent as soon as
    // the line appears still shuts down cleanly.
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = () => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolve();
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    let handle: Awaited<ReturnType<typeof emulator.startEmulator>>;
    try {
      handle = await emulator.startEmulator(options as EmulatorOptions);
    } catch (err) {
      stop();
      throw err;
    }
    const c = handle.config;
    const g = handle.gpu();
    process.stdout.write(
      c.engine === "ollama"
        ? `kubemoot-scheduler emulate: listening on ${handle.url} ` +
            `(VRAM ${c.gpu.vramMiB} MiB, ${c.models.length} models, num_parallel ${c.gpu.numParallel}, ` +
            `num_ctx ${c.defaultContextLength}, time scale ${c.timeScale})\n`
        : `kubemoot-scheduler emulate: listening on ${handle.url} as ${c.engine} ` +
            `(${c.models[0]?.name}, VRAM ${g.usedMiB}/${g.vramMiB} MiB, slots ${g.numParallel}, ` +
            `context ${g.defaultContextLength}, time scale ${c.timeScale})\n`,
    );
    await stopped;
    await handle.close();
    process.stdout.write("kubemoot-scheduler emulate: stopped\n");
    return 0;
  },
};
