import { pino } from "pino";
import { ErrorCode, invalidArgument, KubemootError } from "../../errors/index.js";
import { parseHostPort } from "../../net/index.js";
import { type Command, numberFlag } from "../command.js";

// `kubemoot-scheduler engine`: a real llama.cpp server (docs/rules/engines.md "A real llama.cpp
// engine") for tests, benches and the demo. It needs node-llama-cpp, a development dependency.
export const command: Command = {
  name: "engine",
  summary:
    "a real llama.cpp server (node-llama-cpp, CPU) serving every .gguf in a directory with llama-server's routes",
  details: [
    "Loads every .gguf file in --models with llama.cpp (node-llama-cpp's prebuilt CPU binary: no",
    "build, no download) and serves llama-server's routes in its JSON shapes: /health, /props,",
    "/v1/models, /slots, /metrics, /tokenize, /detokenize, /apply-template, /completion,",
    "/v1/chat/completions and /v1/completions (streamed and whole). A model's id is its file name",
    "without .gguf. Each model has --parallel slots that keep their prompt cache; --ctx is shared",
    "out among them (0: the model's training context), as llama-server's -c is without",
    "--kv-unified. A prompt that does not fit a slot's context is refused (400",
    "exceed_context_size_error), never cut. Tools are refused as llama-server refuses them",
    "without --jinja. Run it as a process of its own: a malformed model can abort inside ggml.",
    "",
    "Needs node-llama-cpp (a development dependency: `npm ci`, not `--omit=dev`).",
    "Exit status: 0 on SIGTERM/SIGINT; 2 when a flag is invalid or a model cannot be loaded.",
    "",
    "Examples:",
    "  kubemoot-scheduler gguf --out models/tiny.gguf",
    "  kubemoot-scheduler engine --models models --parallel 2",
  ].join("\n"),
  flags: {
    listen: {
      type: "string",
      default: "127.0.0.1:8080",
      description: "address to serve on",
      value: "HOST:PORT",
    },
    models: {
      type: "string",
      description: "the directory of .gguf models to serve (required)",
      value: "DIR",
    },
    parallel: {
      type: "string",
      default: "1",
      description: "slots (parallel sequences) per model",
      value: "N",
    },
    ctx: {
      type: "string",
      default: "0",
      description: "context per model in tokens, shared by its slots (0: the model's training context)",
      value: "N",
    },
    threads: {
      type: "string",
      description: "llama.cpp threads (default half the cores, at least 1)",
      value: "N",
    },
  },
  run: async (flags) => {
    const models = flags.models;
    if (typeof models !== "string" || models === "")
      throw invalidArgument("--models", "the directory of .gguf models is required");
    const { host, port } = parseHostPort("--listen", String(flags.listen));
    const options = {
      host,
      port,
      modelsDir: models,
      parallel: numberFlag(flags, "parallel", 1),
      ctx: numberFlag(flags, "ctx", 0),
      ...(typeof flags.threads === "string" ? { threads: numberFlag(flags, "threads", 1) } : {}),
      logger: pino({ level: "warn" }, pino.destination(2)),
    };
    // Listen for the signals before announcing the address, so that a signal sent as soon as
    // the line appears still shuts down cleanly.
    // The handlers stay until the process ends: node-llama-cpp's dependencies (signal-exit)
    // re-raise a signal that no other listener handles, which would kill the engine mid-close.
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = () => resolve();
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    const { startLlamaEngine } = await loadEngine();
    let engine: Awaited<ReturnType<typeof startLlamaEngine>>;
    try {
      engine = await startLlamaEngine(options);
    } catch (err) {
      stop();
      throw err;
    }
    const list = engine.models.map((m) => `${m.id} (n_ctx ${m.nCtx} × ${m.slots} slots)`).join(", ");
    process.stdout.write(
      `kubemoot-scheduler engine: listening on ${engine.url}; threads ${engine.threads}; ${list}\n`,
    );
    await stopped;
    await engine.close();
    process.stdout.write("kubemoot-scheduler engine: stopped\n");
    return 0;
  },
};

/** The engine module, or a clear error where its development dependencies are not installed. */
async function loadEngine(): Promise<typeof import("../../llama-engine/index.js")> {
  try {
    return await import("../../llama-engine/index.js");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw err;
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `the engine needs its development dependencies (node-llama-cpp, @huggingface/jinja), which a production install leaves out: run it from a development install (npm ci): ${(err as Error).message}`,
      { cause: err },
    );
  }
}
