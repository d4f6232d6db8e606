// Kubernetes resource quantities as integers of milli-units, so that ⌊free / request⌋ is exact
// ("100m" of cpu is 100, "1Gi" of memory is 1073741824000, "1" GPU is 1000).

const SUFFIX: Record<string, number> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|m|k|M|G|T|P)|[eE]([+-]?\d+))?$/;

/** Milli-units of a quantity (a string like "500m" or "16Gi", or a number), or undefined. */
export function parseQuantity(q: unknown): number | undefined {
  if (typeof q === "number") return Number.isFinite(q) && q >= 0 ? Math.round(q * 1000) : undefined;
  if (typeof q !== "string") return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  const factor = m[3] !== undefined ? 10 ** Number(m[3]) : SUFFIX[m[2] ?? ""]!;
  const milli = Math.ceil(base * factor * 1000 - 1e-9);
  return Number.isFinite(milli) && milli >= 0 ? milli : undefined;
}

/** A quantity string for milli-units: whole units when exact, else `<n>m`. */
export function formatQuantity(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
