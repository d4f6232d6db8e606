// Every default of spec/placement.md, named once. Sizes MiB, times as the name says.
// Configuration may override them (the sidecar maps KUBEMOOT_* variables onto these).

export const VRAM_RESERVE_MIN_MIB = 2048;
export const VRAM_RESERVE_FRACTION = 0.12;

/** Provider state older than this is ignored (ms). */
export const PROVIDER_STALE_MS = 5 * 60_000;
