// A demo card: what the fleet's data says of it, and what a running one (an emulator, or the
// real llama.cpp) gives the view.
import type { Engine } from "../core/index.js";
import type { EmulatorState } from "../emulator/index.js";

export interface DemoCard {
  /** The ModelProvider name in the bundle's providers.yaml. */
  provider: string;
  label: string;
  vramMiB: number;
  /** ollama loads models on demand; vllm and llamacpp serve the models they were started with. */
  engine: Extract<Engine, "ollama" | "vllm" | "llamacpp">;
  /**
   * A real llama.cpp (`kubemoot-scheduler engine`, a process of its own) over generated models
   * instead of an emulator; `vramMiB` is then the host memory it may use.
   */
  real?: boolean;
  /**
   * On-disk sizes (MiB) of the models it has; a vLLM card has exactly one. A real card's models
   * are generated: model id → seed.
   */
  models: Record<string, number>;
  /** Concurrent requests: Ollama's num_parallel, vLLM's max_num_seqs, llama.cpp's slots. */
  slots: number;
  /** The endpoint the example manifest names, replaced by the running card's URL. */
  exampleEndpoint: string;
}

/** A running card: its address, what the view shows of it, and how to stop it. */
export interface RunningCard {
  readonly card: DemoCard;
  readonly url: string;
  /** The card as the view draws it (an emulator's own state; a real engine's last scrape). */
  state(): EmulatorState;
  /** The KV-cache share (0..1) last read, for a fixed-model card that reports one. */
  kvCacheUsage(): number | undefined;
  /** Reads what `state` and `kvCacheUsage` give (a scrape of the card's /metrics). */
  sample(): Promise<void>;
  close(): Promise<void>;
}
