export { mulberry32, type Random } from "./mulberry32.js";
export { Rng } from "./rng.js";
