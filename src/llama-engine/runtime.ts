// Opens llama.cpp through node-llama-cpp (docs/rules/engines.md "A real llama.cpp engine"):
// CPU only, the prebuilt binary that came with the npm package (never a build, never a
// download), at most `threads` threads. node-llama-cpp is a development dependency, loaded only
// here and only by the `engine` command, so a production install without it fails with a clear
// error instead of at import time.
import type { Llama } from "node-llama-cpp";
import { ErrorCode, KubemootError } from "../errors/index.js";

export async function openLlama(threads: number): Promise<Llama> {
  let lib: typeof import("node-llama-cpp");
  try {
    lib = await import("node-llama-cpp");
  } catch (err) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      "the engine needs node-llama-cpp, a development dependency that a production install (npm ci --omit=dev, the image) leaves out: run it from a development install (npm ci)",
      { cause: err },
    );
  }
  return lib.getLlama({
    gpu: false,
    build: "never",
    skipDownload: true,
    progressLogs: false,
    maxThreads: threads,
    logLevel: lib.LlamaLogLevel.error,
  });
}
