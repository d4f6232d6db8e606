// The Ollama GPU model's inner records (gpu.ts): a request (job) as it moves from the queue to a
// runner's slot, and a runner (one loaded model) with its slots, queue and prompt caches.
import type { ModelSpec } from "./catalog.js";
import type { TimerHandle } from "./clock.js";
import type { JobObserver, JobSpec, RunnerState } from "./gpu-types.js";
import type { SlotCaches } from "./prompt-cache.js";

export type JobState = "pending" | "assigned" | "running" | "done";

export interface Job {
  id: number;
  spec: JobSpec;
  observer: JobObserver;
  arrivedAt: number;
  state: JobState;
  runner?: Runner;
  readyAt?: number;
  startedAt?: number;
  promptDoneAt?: number;
  emitted: number;
  timer?: TimerHandle;
  coldLoad: boolean;
  /** The prompt-cache slot this request runs in, and the prompt tokens it reused. */
  cacheSlot?: number;
  cachedTokens: number;
}

export interface Runner {
  spec: ModelSpec;
  numCtx: number;
  footprintMiB: number;
  kvMiB: number;
  state: RunnerState;
  loadStartedAt: number;
  readyAt?: number;
  keepAliveMs: number;
  idleSince?: number;
  timer?: TimerHandle;
  active: Set<Job>;
  waiting: Job[];
  /** Its slots' prompt caches (Ollama keeps one per slot; they go with the runner). */
  caches: SlotCaches;
  initiator?: Job;
  /** Unload as soon as idle (a request needs it reloaded with another num_ctx). */
  drain: boolean;
}
