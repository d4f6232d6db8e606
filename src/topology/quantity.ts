// Resource quantities as integers of milli-units, so that ⌊free / request⌋ is exact ("100m" of
// cpu is 100, "1Gi" of memory is 1073741824000, "1" GPU is 1000); the grammar is the shared
// exact one (src/quantity).
import { parseQuantity as parseExact, quantityMilliCeil } from "../quantity/index.js";

/** Milli-units of a quantity (a string like "500m" or "16Gi", or a number), or undefined. */
export function parseQuantity(q: unknown): number | undefined {
  if (typeof q === "number") return Number.isFinite(q) && q >= 0 ? Math.round(q * 1000) : undefined;
  if (typeof q !== "string") return undefined;
  const exact = parseExact(q.trim());
  if (!exact || exact.mantissa < 0n) return undefined;
  const milli = Number(quantityMilliCeil(exact));
  return Number.isFinite(milli) ? milli : undefined;
}

/** A quantity string for milli-units: whole units when exact, else `<n>m`. */
export function formatQuantity(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
