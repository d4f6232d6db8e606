// A seeded pseudo-random source with distributions, for the simulation. Every draw goes through
// one of these, so a run is a function of its seed. Independent streams (arrivals, call work,
// the random policy) are forked by label: adding draws to one stream never shifts another.
import { mulberry32 } from "./mulberry32.js";

/** FNV-1a over a string, mixed with a seed: the seed of a labelled stream. */
function hashLabel(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export class Rng {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = mulberry32(seed);
  }

  /** An independent stream named `label` (the same seed and label give the same stream). */
  fork(label: string): Rng {
    return new Rng(hashLabel(this.seed, label));
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.next();
  }

  /** Uniform integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("pick from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Exponential with the given mean. */
  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }

  /** Standard normal (Box–Muller; one value per call, the pair's second is dropped). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Lognormal with the given mean and log-space standard deviation sigma. */
  lognormal(mean: number, sigma: number): number {
    const mu = Math.log(mean) - (sigma * sigma) / 2;
    return Math.exp(mu + sigma * this.normal());
  }
}
