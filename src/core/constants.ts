// Every default of docs/rules/placement.md, named once. Sizes MiB, times as the name says.
// Configuration may override them (the sidecar maps KUBEMOOT_* variables onto these).

export const VRAM_RESERVE_MIN_MIB = 2048;
export const VRAM_RESERVE_FRACTION = 0.12;

/** Provider state older than this is ignored (ms). */
export const PROVIDER_STALE_MS = 5 * 60_000;

// ── Occupancy (§2) ──────────────────────────────────────────────────────────────────────────
/** On-disk size × this = KV-inclusive occupancy when nothing better is known. */
export const OCCUPANCY_DISK_FACTOR = 1.2;
/** Name-based estimate: MiB per billion parameters. */
export const NAME_ESTIMATE_MIB_PER_BILLION = 800;
/** Name-based estimate: fixed MiB added for runtime and KV cache. */
export const NAME_ESTIMATE_BASE_MIB = 1024;

// ── Health (§3) ─────────────────────────────────────────────────────────────────────────────
/** Failures within the window that open a provider's circuit. */
export const CIRCUIT_FAILURE_THRESHOLD = 3;
/** Window in which failures count toward opening the circuit (ms). */
export const CIRCUIT_WINDOW_MS = 120_000;
/** How long an opened circuit stays open (ms). */
export const CIRCUIT_OPEN_MS = 60_000;
/** EMA weight of the newest sample of a (provider, model) success rate. */
export const SUCCESS_RATE_EMA_WEIGHT = 0.3;
/** Samples before a success rate counts; before that it reads 1.0. */
export const SUCCESS_RATE_MIN_SAMPLES = 5;
/** EMA weight of the newest per-endpoint call latency sample. */
export const LATENCY_EMA_WEIGHT = 0.4;

// ── Prompt tokens (§3) ──────────────────────────────────────────────────────────────────────
/** Starting chars-per-token ratio before any engine report. */
export const CHARS_PER_TOKEN_DEFAULT = 3.5;
/**
 * How fast the chars-per-token ratio follows new reports: a report's sums (chars, tokens) are
 * added to the learned sums decayed by (1 − this), so a stream of equal reports moves the ratio
 * like an EMA with this weight, and a long report weighs more than a short one.
 */
export const CHARS_PER_TOKEN_LEARN_RATE = 0.3;
/** Reports outside [min, max] chars/token are ignored. */
export const CHARS_PER_TOKEN_MIN = 1;
export const CHARS_PER_TOKEN_MAX = 8;
/**
 * Reports of fewer engine-counted prompt tokens are not learned from: a short prompt's count is
 * mostly chat template ("hi" is 8 tokens), which says nothing about the text's ratio.
 */
export const CHARS_PER_TOKEN_MIN_SAMPLE_TOKENS = 256;
/**
 * The generous estimate, used to decide a refusal before sending: chars over the larger of the
 * learned and default ratios times this factor (capped at the band's maximum), so a prompt is
 * refused only when even a low count cannot fit.
 */
export const GENEROUS_RATIO_FACTOR = 1.5;
/** A reported prompt below this share of the estimate counts as cut by the engine. */
export const TRUNCATION_RATIO = 0.5;

// ── Weighted cost (§4) ──────────────────────────────────────────────────────────────────────
/** Points per unit of (1 − success rate). */
export const COST_RELIABILITY_WEIGHT = 0.5;
/** Points when the published residents already exceed usable VRAM. */
export const COST_SPILL = 20;
/** Points for a cold load (warm: 0). */
export const COST_COLD_LOAD = 5;
/** Points for needing room on a provider with live work. */
export const COST_EVICT_LIVE = 1000;
/** Base points for needing room on an idle provider (scaled by 1 + shortfall fraction). */
export const COST_EVICT_IDLE = 50;
/** Points per unit of (usable − F) / F: smaller cards for smaller models. */
export const COST_BEST_FIT = 25;
/**
 * Points off a copy whose prompt cache saves a whole call's worth: as much as a saturated copy's
 * contention, so a warm cache wins among free copies and a busy one is left for a free one.
 */
export const COST_PREFIX_CACHE = 1;

// ── Planner and queue-or-unload (§5) ────────────────────────────────────────────────────────
/** Candidates within this many score points of the preferred are acceptable. */
export const CANDIDATE_TOLERANCE_POINTS = 10;
/** Assumed call time when a provider has no latency EMA yet (s). */
export const DEFAULT_CALL_TIME_S = 30;
/** Load (and reload) speed of a model from disk (MiB/s): about 1 GiB/s. */
export const LOAD_MIB_PER_S = 1024;
/**
 * Prompt tokens a copy evaluates per second before this sidecar has measured it there (§5.5):
 * the slow end of a 14b model on one GPU, so a saving is never overstated.
 */
export const PREFILL_TOKENS_PER_S = 2000;
/** A prefill rate is learned only from calls that evaluated at least this many prompt tokens. */
export const MIN_PREFILL_SAMPLE_TOKENS = 64;
/**
 * A conversation another sidecar published on a copy counts as live, its prompt worth keeping
 * in the copy's cache, this long after its last turn there ended (§5.5): an agent's tool call
 * rarely takes longer.
 */
export const CONVERSATION_LIVE_MS = 5 * 60_000;
/** Time to unload one model (s). */
export const UNLOAD_S = 1;
/** Weight of recent use + prediction in a victim's expected reloads. */
export const RELOAD_RECENT_WEIGHT = 0.5;
/**
 * A resident copy that agents wait for is not unloaded (by the time policy) for a model with no
 * more waiters until it has been resident this many of its own load times: switching a card
 * between two busy models then spends at most 1/(1 + this) of its time loading.
 */
export const MIN_RESIDENCY_LOADS = 3;
/**
 * A second copy of a model that is warm elsewhere holds VRAM well past the call that loads it,
 * room other models in demand may need: the time policy then counts its load this many times
 * against waiting for the first copy. Room no other model wants costs nothing (weight 1).
 */
export const SECOND_COPY_LOADS = 1.5;
/** Idle residents considered as victims per pass, least needed first. */
export const MAX_VICTIMS_CONSIDERED = 10;

// ── Waiting, planning at selection, demand, leases (§6–§8, docs/rules/state.md) ─────────────
/** Safety limit of a state-driven wait for capacity (s). */
export const GPU_WAIT_LIMIT_S = 90;
/** Prompt size assumed when planning at selection (chars). */
export const ASSUMED_PROMPT_CHARS = 16_000;
/** Lifetime of a held plan and of intent entries (ms). */
export const HELD_PLAN_TTL_MS = 3 * 60_000;
export const INTENT_TTL_MS = 3 * 60_000;
/** Lifetime of wait entries (ms). */
export const WAIT_ENTRY_TTL_MS = 10 * 60_000;
/** Lifetime of use and sel entries (ms). */
export const RATE_ENTRY_TTL_MS = 6 * 60 * 60_000;
/** Call timeout (s); the default ticket lease adds a margin to it. */
export const CALL_TIMEOUT_S = 120;
export const TICKET_LEASE_MARGIN_S = 30;
/** Default ticket lease (s): call timeout + margin = 150 s. */
export const TICKET_LEASE_S = CALL_TIMEOUT_S + TICKET_LEASE_MARGIN_S;
/** Decisions read state at most this old (ms). */
export const FRESH_READ_MS = 200;
