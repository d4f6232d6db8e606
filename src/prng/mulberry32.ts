// The one seeded generator (mulberry32: floats in [0, 1) from a 32-bit state). Everything
// seeded draws from it (the simulation, the emulator's probabilistic faults, the demo's
// traffic, the benchmarks' synthetic inputs), so each of those runs is a function of its seed.

/** Floats in [0, 1). */
export type Random = () => number;

export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
