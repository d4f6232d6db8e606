// Wire shapes of the shared state (docs/rules/state.md). Field names are Kubemoot's, byte-compatible
// with its operator and Java runtime, so the state layer hands these values to the core
// unchanged. All sizes are MiB; `*At` fields are as the spec gives them (RFC 3339 strings for
// provider state and tickets' claimedAt, epoch milliseconds for leases and demand entries).

import type { Engine } from "./engines.js";

/** Value of `kubemoot_provider_state/<provider>`, written by the operator's publisher. */
export interface ProviderState {
  name: string;
  endpoint: string;
  /** Parallel slots per loaded model (OLLAMA_NUM_PARALLEL), at least 1. */
  maxParallel: number;
  activeCount: number;
  queueDepth: number;
  loadedModels: string[];
  ready: boolean;
  /** RFC 3339 UTC; empty when unknown (an empty or unparsable value is never stale). */
  lastProbedAt: string;
  /** Total VRAM; 0 = unknown. */
  totalVramMiB: number;
  /** Resident models: MiB from /api/ps size_vram. */
  loadedModelFootprintsMiB: Record<string, number>;
  /** Models on disk but not loaded: MiB from /api/tags size. */
  availableModelFootprintsMiB: Record<string, number>;
  /** The provider's per-request context (OLLAMA_CONTEXT_LENGTH); 0 = unknown. */
  contextLength: number;
  /** Loaded models' context windows from /api/ps context_length. */
  loadedModelContextLengths: Record<string, number>;
  /**
   * Our extension: how many models the engine keeps loaded at once (OLLAMA_MAX_LOADED_MODELS);
   * absent or 0 = no limit known. A load past it would make the engine evict on its own.
   */
  maxLoadedModels?: number;
  /**
   * Our extension: the engine serving this provider; absent = "ollama" (Kubemoot's operator
   * never writes it). For a fixed-model engine `loadedModels` lists the models it serves,
   * `maxParallel` its slots (llama.cpp total_slots, vLLM/SGLang max running requests when
   * known), `activeCount` running and `queueDepth` waiting requests from its metrics, and
   * `availableModelFootprintsMiB` is empty: it loads nothing on demand.
   */
  engine?: Engine;
  /** Our extension: fixed-model engines' KV-cache usage, a fraction 0..1; absent = unknown. */
  kvCacheUsage?: number;
  /** Our extension: the engine answers POST /tokenize (exact prompt token counts). */
  tokenize?: boolean;
  /**
   * Our extension: models the engine runs with one slot whatever `maxParallel` says (Ollama's
   * embedding models, from /api/show capabilities); absent = none known.
   */
  singleSlotModels?: string[];
}

/** Value of `kubemoot_provider_tickets/<provider>__<ticketId>`. */
export interface Ticket {
  ticketId: string;
  provider: string;
  /** VRAM the model takes; a warm ticket records it too but claims no new room. */
  modelFootprintMiB: number;
  kvCacheFootprintMiB: number;
  holderId: string;
  /** ISO-8601. */
  claimedAt: string;
  modelName: string;
  /** Victims this ticket plans to unload, with their footprints. */
  evicts: Record<string, number>;
  /** Our lease, epoch ms. Absent on Kubemoot's own tickets: they live until the bucket TTL. */
  expiresAt?: number;
  /**
   * Ours: true when the ticket's model was not resident at claim time (a cold load in
   * flight). Kubemoot's tickets lack it; readers then treat a ticket whose model is not
   * resident as a cold load.
   */
  coldLoad?: boolean;
}

/** Value of `kubemoot_provider_tickets/residency__<provider>__<model>`. */
export interface Residency {
  provider: string;
  modelName: string;
  modelFootprintMiB: number;
  /**
   * Ours: when the overlay was written (epoch ms). An overlay only bridges the time until the
   * next probe; once the provider was probed after it and does not list the model, the model
   * is gone (keep_alive expiry, an eviction) and the overlay no longer counts. Kubemoot's
   * overlays lack it and count until deleted.
   */
  writtenAt?: number;
  /**
   * Ours: how long the load that made the model resident took (ms), as the call that loaded it
   * measured it; absent when unknown. Placement keeps a copy others wait for resident a few of
   * its own load times before it may be unloaded (docs/rules/placement.md §5).
   */
  loadMs?: number;
}

/** `wait.<tok(model)>.<tok(ns/agent)>`: an agent waits for this model (10 min). */
export interface WaitEntry {
  kind: "wait";
  model: string;
  agent: string;
  expiresAt: number;
}

/** `intent.<tok(model)>.<tok(ns/agent)>`: a thread plans to call this model (3 min). */
export interface IntentEntry {
  kind: "intent";
  model: string;
  agent: string;
  thread: string;
  expiresAt: number;
}

/** `use.<tok(model)>`: decayed rate of calls to this model (6 h). */
export interface UseEntry {
  kind: "use";
  model: string;
  agent: string;
  rate: number;
  updatedAt: number;
  lastUsedAt: number;
  expiresAt: number;
  /**
   * Our extension: EMA of a call's time without its load (ms), over every sidecar's calls of the
   * model, so that a sidecar that has not measured the model yet can still estimate a queue.
   */
  serviceMs?: number;
  /**
   * Our extension: when a call of each band last used the model (epoch ms): a model a higher
   * band used lately is not unloaded for a lower one (docs/rules/fairness.md §5).
   */
  bands?: Partial<Record<Band, number>>;
}

/** `sel.<tok(ns/crew)>.<tok(ns/agent)>`: decayed rate at which an agent is selected (6 h). */
export interface SelEntry {
  kind: "sel";
  rate: number;
  updatedAt: number;
  expiresAt: number;
  models: string[];
}

/** A priority band (docs/rules/fairness.md §2), highest first: interactive, standard, batch. */
export type Band = "interactive" | "standard" | "batch";

/** `queue.<tok(model)>.…`: one waiting call, for fair admission (docs/rules/fairness.md §3). */
export interface QueueEntry {
  kind: "queue";
  /** The call's own id (random, per call). */
  id: string;
  model: string;
  crew: string;
  band: Band;
  /** The crew's weight as the waiting sidecar knows it (> 0). */
  weight: number;
  /** When the call began to wait (epoch ms). */
  since: number;
  expiresAt: number;
}

/** `svc.…`: one process's attained service of one crew (tokens, docs/rules/fairness.md §4). */
export interface ServiceEntry {
  kind: "svc";
  crew: string;
  /** The crew's weight as that process knows it (> 0). */
  weight: number;
  /** Attained service as of updatedAt, decayed with the half-life before it. */
  service: number;
  updatedAt: number;
  expiresAt: number;
}

export type DemandEntry = WaitEntry | IntentEntry | UseEntry | SelEntry | QueueEntry | ServiceEntry;
