// The web view's wire shapes (docs/web-view.md): what GET /api/snapshot answers and what the
// Server-Sent Events of GET /api/events carry. The view server builds them (./), the page in
// web/ reads them (type-only imports). No prompt text, no secret and no endpoint URL appears in
// any of them.

/** One segment of a card's VRAM bar (MiB). */
export interface VramSegment {
  /** resident: a loaded model; loading: a cold load in flight (its ticket); reserve: kept free; free. */
  kind: "resident" | "loading" | "reserve" | "free";
  /** The model, for resident and loading segments. */
  model?: string;
  mib: number;
}

/** One provider (GPU card or engine) as the fleet panel shows it. */
export interface ProviderCard {
  name: string;
  /** What the GPU is called (the ModelProvider's `gpu` label, or the demo's card names); absent = unknown. */
  label?: string;
  /** ollama, vllm, llamacpp, sglang, openai. */
  engine: string;
  /** The probe answered on its last round. */
  ready: boolean;
  /** A sidecar marked it suspect (calls failed there) and it has not been probed healthy since. */
  suspect: boolean;
  /** RFC 3339; empty when never probed. */
  lastProbedAt: string;
  /** Total VRAM (MiB); 0 when unknown. */
  totalMiB: number;
  /** The bar, left to right: resident models, loads in flight, reserve, free. Sums to totalMiB when known. */
  vram: VramSegment[];
  /** Models loaded there now. */
  loadedModels: string[];
  /** Parallel slots per model, calls running and waiting at the engine. */
  slots: { max: number; running: number; queued: number };
  /** vLLM / llama.cpp / SGLang KV-cache use, 0..1; absent when unknown. */
  kvCacheUsage?: number;
}

/** One live ticket (a placed call holding room or a slot). */
export interface TicketRow {
  id: string;
  provider: string;
  model: string;
  /** The holder's agent (namespace/name) or process id. */
  holder: string;
  /** Epoch ms. */
  claimedAt: number;
  /** Lease end, epoch ms; 0 when the ticket has none (Kubemoot's own). */
  expiresAt: number;
  coldLoad: boolean;
  /** Models this ticket's load unloads. */
  victims: string[];
}

/** An expected-seconds option the time policy weighed (docs/rules/placement.md §5). */
export interface DecisionOption {
  provider: string;
  model: string;
  kind: "warm" | "cold" | "unload" | "queue";
  /** Expected seconds until the call finishes there (plus an unload's price to others). */
  seconds: number;
}

/**
 * One decision record, as a sidecar publishes it on `kubemoot.decisions.<namespace>` (bounded,
 * sampled, no prompt text): a placement, a refusal, or a released call with its attribution.
 */
export interface DecisionRecord {
  v: 1;
  /** The call: its ticket id when placed, else a random id. */
  id: string;
  /** Epoch ms. */
  at: number;
  kind: "placed" | "refused" | "released";
  /** namespace/name of the calling agent. */
  agent: string;
  crew: string;
  /** The publishing sidecar (holder id). */
  instance: string;
  model: string;
  provider?: string;
  engine?: string;
  cold?: boolean;
  evicted?: string[];
  /** How long the call waited for capacity (ms). */
  waitMs: number;
  /** Refusals: the reason code (gpu-busy, model-too-large, prompt-too-large, provider-unavailable, model-unknown). */
  reason?: string;
  /** Refusals: the message (bounded; never prompt text). */
  message?: string;
  /** The placement policy (time, weighted). */
  policy: string;
  /** The best options the policy weighed, best first (time policy; at most 3). */
  options?: DecisionOption[];
  priority?: string;
  queuePosition?: number;
  /** The revision of the thread's published binding the call took (docs/rules/binding.md §9). */
  bindingRevision?: number;
  /** Released calls: the attribution exactly as the Attribute RPC answers it (proto JSON). */
  attribution?: Record<string, unknown>;
  /** How many calls this record stands for (1 unless the sidecar sampled). */
  weight: number;
  /** W3C trace id of the call, when traced. */
  traceId?: string;
}

/** Demand: who waits for what. */
export interface DemandView {
  models: {
    model: string;
    /** Calls waiting for it now (fleet-wide). */
    waiting: number;
    /** Agents whose threads plan to call it. */
    intents: number;
    /** Decayed call rate (events). */
    recentUse: number;
    /** The selection forecast: decayed rate of agents naming it. */
    forecast: number;
  }[];
  crews: { crew: string; waiting: number; bands: Record<string, number> }[];
  /** Refusals over the trend window, by reason (weighted counts). */
  refusals: { reason: string; count: number }[];
}

/** One trend step (a closed bucket). */
export interface TrendPoint {
  /** Bucket start, epoch ms. */
  t: number;
  callsPerS: number;
  /** p95 of placed calls' wait (s); null when no call was placed in the bucket. */
  waitP95S: number | null;
  loadsPerMin: number;
  unloadsPerMin: number;
  /** Used VRAM per provider (MiB) at the bucket's end. */
  vramMiB: Record<string, number>;
}

export interface TrendSeries {
  /** Bucket length (ms). */
  stepMs: number;
  /** Oldest first; at most the window (60 min). */
  points: TrendPoint[];
}

export interface ViewSnapshot {
  v: 1;
  /** Server time, epoch ms (ages are computed against it). */
  at: number;
  store: { kind: "memory" | "nats"; available: boolean };
  providers: ProviderCard[];
  tickets: TicketRow[];
  /** Newest first. */
  decisions: DecisionRecord[];
  demand: DemandView;
  trends: TrendSeries;
  /**
   * The operator's trace link template (KUBEMOOT_WEB_TRACE_URL): an http(s) URL with `{traceId}`
   * where a record's trace id goes (trace-link.ts builds the link). Absent: the id shows as text.
   */
  traceUrl?: string;
}

/** The events of GET /api/events, by SSE event name. */
export interface ViewEvents {
  snapshot: ViewSnapshot;
  fleet: { at: number; providers: ProviderCard[] };
  tickets: { at: number; tickets: TicketRow[] };
  demand: { at: number; demand: DemandView };
  decision: DecisionRecord;
  trend: TrendPoint;
}

/** GET /api/calls/:id: every record of one call, oldest first. */
export interface CallStory {
  id: string;
  records: DecisionRecord[];
}
