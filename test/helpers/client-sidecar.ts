// A live sidecar for the client examples (embedded state, probing one emulated GPU, no proxy),
// and a reader of its /metrics.
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { type SidecarProcess, startSidecarProcess } from "./sidecar-process.js";

export interface ClientSidecar {
  readonly emulator: EmulatorHandle;
  readonly sidecar: SidecarProcess;
  /** The /metrics lines that start with `name`. */
  metric(name: string): Promise<string>;
  /** Stops both; resolves with the sidecar's exit code. */
  stop(): Promise<number | null>;
}

export async function startClientSidecar(): Promise<ClientSidecar> {
  const emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { "qwen3:8b": 4863 },
    timeScale: 0.01,
  });
  const sidecar = await startSidecarProcess([
    "--state",
    "memory",
    "--provider",
    `gpu-a=${emulator.url},vram=24563`,
    "--proxy-listen",
    "",
  ]);
  return {
    emulator,
    sidecar,
    async metric(name) {
      const text = await (await fetch(`${sidecar.apiUrl}/metrics`)).text();
      return text
        .split("\n")
        .filter((l) => l.startsWith(name))
        .join("\n");
    },
    async stop() {
      const code = await sidecar.stop();
      await emulator.close();
      return code;
    },
  };
}
