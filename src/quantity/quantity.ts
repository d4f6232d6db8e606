// Kubernetes resource quantities (`1Gi`, `500m`, `1.5e3`), exact: a quantity is an integer
// mantissa times 10^-scale, so binary and decimal suffixes compare and add without rounding.
// The grammar is apimachinery's: sign? digits (. digits)? then a binary-SI suffix (Ki..Ei),
// a decimal-SI suffix (n u m "" k M G T P E) or a decimal exponent (e|E signed integer).

export interface Quantity {
  /** value = mantissa × 10^-scale; normalized: scale ≥ 0 and no trailing zero while scale > 0. */
  readonly mantissa: bigint;
  readonly scale: number;
}

const PATTERN = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
// Exponents beyond this are not quantities anyone publishes; refusing them bounds the bigints.
const MAX_EXPONENT = 64;

/** Parses a quantity, or returns undefined when the text is not one. */
export function parseQuantity(text: string): Quantity | undefined {
  const m = PATTERN.exec(text);
  if (!m) return undefined;
  const [, sign, number, suffix = ""] = m;
  const [whole = "", fraction = ""] = number!.split(".");
  let mantissa = BigInt(`${whole}${fraction}` || "0");
  let scale = fraction.length;
  if (suffix in BINARY) {
    mantissa *= 1n << BigInt(BINARY[suffix]!);
  } else if (suffix in DECIMAL) {
    scale -= DECIMAL[suffix]!;
  } else if (suffix !== "") {
    const exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > MAX_EXPONENT) return undefined;
    scale -= exponent;
  }
  if (sign === "-") mantissa = -mantissa;
  return normalize(mantissa, scale);
}

function normalize(mantissa: bigint, scale: number): Quantity {
  let m = mantissa;
  let s = scale;
  if (s < 0) {
    m *= 10n ** BigInt(-s);
    s = 0;
  }
  while (s > 0 && m % 10n === 0n) {
    m /= 10n;
    s--;
  }
  if (m === 0n) s = 0;
  return { mantissa: m, scale: s };
}

function align(a: Quantity, b: Quantity): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.mantissa * 10n ** BigInt(scale - a.scale), b.mantissa * 10n ** BigInt(scale - b.scale), scale];
}

/** -1, 0 or 1, like apimachinery's Quantity.Cmp. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function addQuantities(a: Quantity, b: Quantity): Quantity {
  const [x, y, scale] = align(a, b);
  return normalize(x + y, scale);
}

export function negateQuantity(a: Quantity): Quantity {
  return { mantissa: -a.mantissa, scale: a.scale };
}

export function quantityFromInteger(n: bigint): Quantity {
  return { mantissa: n, scale: 0 };
}

export function isIntegerQuantity(q: Quantity): boolean {
  return q.scale === 0;
}

/** The integer value, or undefined when it is fractional or outside int64 (CEL's asInteger fails then). */
export function quantityAsInteger(q: Quantity): bigint | undefined {
  if (q.scale !== 0) return undefined;
  if (q.mantissa > 9223372036854775807n || q.mantissa < -9223372036854775808n) return undefined;
  return q.mantissa;
}

export function quantityAsFloat(q: Quantity): number {
  return Number(q.mantissa) / 10 ** q.scale;
}

export function quantitySign(q: Quantity): number {
  return q.mantissa < 0n ? -1 : q.mantissa > 0n ? 1 : 0;
}

/** A canonical text: equal quantities (`1Gi`, `1024Mi`) give the same string. */
export function canonicalQuantity(q: Quantity): string {
  return q.scale === 0 ? q.mantissa.toString() : `${q.mantissa}e-${q.scale}`;
}

/** Inverse of canonicalQuantity. */
export function fromCanonicalQuantity(text: string): Quantity {
  const [m, s] = text.split("e-");
  return { mantissa: BigInt(m!), scale: s === undefined ? 0 : Number(s) };
}

/** The quantity in milli-units, rounded up (resource requests: "100m" cpu → 100, "1" → 1000). */
export function quantityMilliCeil(q: Quantity): bigint {
  const scaled = q.mantissa * 1000n;
  const div = 10n ** BigInt(q.scale);
  const floor = scaled / div;
  return scaled % div === 0n || scaled < 0n ? floor : floor + 1n;
}
