// The simulation's files take Rng from here (engine.ts is being split elsewhere); it lives in
// src/prng.
export { Rng } from "../prng/index.js";
