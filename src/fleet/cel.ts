// Kubernetes DRA's CEL dialect on @bufbuild/cel: the `device` variable (driver, attributes and
// capacity keyed by domain), plus the Kubernetes `quantity` and `semver` libraries. Quantities
// and versions travel through CEL as one-entry maps holding a canonical text, so `==` between
// them is exact (quantity("1Gi") == quantity("1024Mi")) without a custom CEL type.
import {
  CelScalar,
  type CelValue,
  celEnv,
  celFunc,
  celMap,
  celMethod,
  isCelError,
  isCelMap,
  mapType,
  parse,
  plan,
} from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { ErrorCode, KubemootError } from "../errors/index.js";
import {
  addQuantities,
  canonicalQuantity,
  compareQuantities,
  fromCanonicalQuantity,
  isIntegerQuantity,
  negateQuantity,
  parseQuantity,
  type Quantity,
  quantityAsFloat,
  quantityAsInteger,
  quantityFromInteger,
  quantitySign,
} from "../quantity/index.js";
import { canonicalSemver, compareSemver, parseSemver, type Semver } from "./semver.js";
import type { AttributeValue, Device } from "./types.js";

const QUANTITY_KEY = "@kubemoot.ai/quantity";
const SEMVER_KEY = "@kubemoot.ai/semver";

function quantityValue(q: Quantity): CelValue {
  return celMap(new Map([[QUANTITY_KEY, canonicalQuantity(q)]]));
}

function semverValue(v: Semver): CelValue {
  return celMap(new Map([[SEMVER_KEY, canonicalSemver(v)]]));
}

function asQuantity(v: CelValue): Quantity | undefined {
  if (!isCelMap(v) || v.size !== 1) return undefined;
  const text = v.get(QUANTITY_KEY);
  return typeof text === "string" ? fromCanonicalQuantity(text) : undefined;
}

function asSemver(v: CelValue): Semver | undefined {
  if (!isCelMap(v) || v.size !== 1) return undefined;
  const text = v.get(SEMVER_KEY);
  return typeof text === "string" ? parseSemver(text) : undefined;
}

/** A quantity operand: a quantity, or an int where Kubernetes accepts one (add, sub). */
function operand(v: CelValue): Quantity {
  if (typeof v === "bigint") return quantityFromInteger(v);
  const q = asQuantity(v);
  if (!q) throw new KubemootError(ErrorCode.InvalidArgument, "expected a quantity or an int");
  return q;
}

function quantityTarget(v: CelValue): Quantity {
  const q = asQuantity(v);
  if (!q) throw new KubemootError(ErrorCode.InvalidArgument, "method needs a quantity");
  return q;
}

/** Compares two quantities or two versions; anything else is an evaluation error. */
function compare(a: CelValue, b: CelValue): number {
  const qa = asQuantity(a);
  const qb = asQuantity(b);
  if (qa && qb) return compareQuantities(qa, qb);
  const sa = asSemver(a);
  const sb = asSemver(b);
  if (sa && sb) return compareSemver(sa, sb);
  throw new KubemootError(ErrorCode.InvalidArgument, "compareTo needs two quantities or two semvers");
}

function semverPart(v: CelValue, part: "major" | "minor" | "patch"): bigint {
  const s = asSemver(v);
  if (!s) throw new KubemootError(ErrorCode.InvalidArgument, `${part}() needs a semver`);
  return s[part];
}

const { DYN, STRING, INT, BOOL, DOUBLE } = CelScalar;

const FUNCS = [
  celFunc("quantity", [STRING], DYN, (text) => {
    const q = parseQuantity(text);
    if (!q) throw new KubemootError(ErrorCode.InvalidArgument, `invalid quantity "${text}"`);
    return quantityValue(q);
  }),
  celFunc("isQuantity", [STRING], BOOL, (text) => parseQuantity(text) !== undefined),
  celFunc("semver", [STRING], DYN, (text) => {
    const v = parseSemver(text);
    if (!v) throw new KubemootError(ErrorCode.InvalidArgument, `invalid semver "${text}"`);
    return semverValue(v);
  }),
  celFunc("isSemver", [STRING], BOOL, (text) => parseSemver(text) !== undefined),
  celMethod("compareTo", DYN, [DYN], INT, function (other) {
    return BigInt(compare(this, other));
  }),
  celMethod("isGreaterThan", DYN, [DYN], BOOL, function (other) {
    return compare(this, other) > 0;
  }),
  celMethod("isLessThan", DYN, [DYN], BOOL, function (other) {
    return compare(this, other) < 0;
  }),
  celMethod("add", DYN, [DYN], DYN, function (other) {
    return quantityValue(addQuantities(quantityTarget(this), operand(other)));
  }),
  celMethod("sub", DYN, [DYN], DYN, function (other) {
    return quantityValue(addQuantities(quantityTarget(this), negateQuantity(operand(other))));
  }),
  celMethod("asInteger", DYN, [], INT, function () {
    const n = quantityAsInteger(quantityTarget(this));
    if (n === undefined)
      throw new KubemootError(ErrorCode.InvalidArgument, "quantity is not an int64 integer");
    return n;
  }),
  celMethod("isInteger", DYN, [], BOOL, function () {
    return isIntegerQuantity(quantityTarget(this));
  }),
  celMethod("asApproximateFloat", DYN, [], DOUBLE, function () {
    return quantityAsFloat(quantityTarget(this));
  }),
  celMethod("sign", DYN, [], INT, function () {
    return BigInt(quantitySign(quantityTarget(this)));
  }),
  celMethod("major", DYN, [], INT, function () {
    return semverPart(this, "major");
  }),
  celMethod("minor", DYN, [], INT, function () {
    return semverPart(this, "minor");
  }),
  celMethod("patch", DYN, [], INT, function () {
    return semverPart(this, "patch");
  }),
];

// Kubernetes' CEL environment has the strings extension (lowerAscii, split, …) too.
const ENV = celEnv({ funcs: [...strings, ...FUNCS], variables: { device: mapType(STRING, DYN) } });

/**
 * Named functions the expression calls that the environment does not have. Kubernetes' type
 * checker refuses them at compile time; @bufbuild/cel's checker is not public, so the parsed
 * tree is walked instead (operators such as `_&&_` and macros are the planner's own).
 */
function unknownFunctions(node: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(node)) {
    for (const n of node) unknownFunctions(n, out);
  } else if (typeof node === "object" && node !== null) {
    const o = node as { case?: unknown; value?: { function?: unknown } };
    if (o.case === "callExpr" && typeof o.value?.function === "string") {
      const name = o.value.function;
      if (/^[A-Za-z]/.test(name) && !ENV.funcs.find(name)) out.add(name);
    }
    for (const v of Object.values(node)) if (typeof v === "object") unknownFunctions(v, out);
  }
  return out;
}

export type DeviceBinding = ReadonlyMap<string, unknown>;
type Program = (device: DeviceBinding) => boolean;

export type Compiled = { ok: true; program: Program } | { ok: false; error: string };

// Compiled once per expression for the life of the process: selectors repeat across
// deployments and reconciles. Bounded so a stream of distinct expressions cannot grow it forever.
const COMPILED = new Map<string, Compiled>();
const MAX_COMPILED = 10_000;

/** Compiles a DRA selector (cached); a parse error or an undeclared function comes back as an error text. */
export function compileSelector(expression: string): Compiled {
  const cached = COMPILED.get(expression);
  if (cached) return cached;
  let compiled: Compiled;
  try {
    const parsed = parse(expression);
    const unknown = [...unknownFunctions(parsed.expr, new Set())];
    if (unknown.length > 0)
      throw new KubemootError(
        ErrorCode.InvalidArgument,
        `undeclared function ${unknown.map((f) => `'${f}'`).join(", ")}`,
      );
    const run = plan(ENV, parsed);
    compiled = {
      ok: true,
      // An evaluation error or a non-bool result is a non-match, as in Kubernetes.
      program: (device) => {
        try {
          const r = run({ device: device as Map<string, CelValue> });
          return !isCelError(r) && r === true;
        } catch {
          return false;
        }
      },
    };
  } catch (err) {
    compiled = { ok: false, error: (err as Error).message };
  }
  if (COMPILED.size >= MAX_COMPILED) COMPILED.clear();
  COMPILED.set(expression, compiled);
  return compiled;
}

function attributeValue(v: AttributeValue): unknown {
  if ("string" in v) return v.string;
  if ("bool" in v) return v.bool;
  if ("int" in v) return BigInt(v.int);
  const s = parseSemver(v.version);
  // An unparsable published version stays a string: comparing it then fails, a non-match.
  return s ? semverValue(s) : v.version;
}

/** Splits `domain/id`; a bare id belongs to the driver's domain. */
function qualify(key: string, driver: string): [string, string] {
  const slash = key.lastIndexOf("/");
  return slash < 0 ? [driver, key] : [key.slice(0, slash), key.slice(slash + 1)];
}

function byDomain<T>(entries: Record<string, T>, driver: string, value: (v: T) => unknown) {
  const out = new Map<string, Map<string, unknown>>();
  for (const [key, v] of Object.entries(entries)) {
    const [domain, id] = qualify(key, driver);
    let inner = out.get(domain);
    if (!inner) {
      inner = new Map();
      out.set(domain, inner);
    }
    const converted = value(v);
    if (converted !== undefined) inner.set(id, converted);
  }
  return out;
}

const BINDINGS = new WeakMap<Device, DeviceBinding>();

/** The CEL `device` variable for a published device (built once per device object). */
export function deviceBinding(device: Device): DeviceBinding {
  let b = BINDINGS.get(device);
  if (!b) {
    b = new Map<string, unknown>([
      ["driver", device.driver],
      ["attributes", byDomain(device.attributes, device.driver, attributeValue)],
      [
        "capacity",
        byDomain(device.capacity, device.driver, (text) => {
          const q = parseQuantity(text);
          return q ? quantityValue(q) : undefined;
        }),
      ],
    ]);
    BINDINGS.set(device, b);
  }
  return b;
}

const RESULTS = new WeakMap<Device, Map<string, boolean>>();

/** Whether every selector holds for the device; uncompilable selectors never hold. Cached per device. */
export function selectorsHold(device: Device, selectors: readonly string[]): boolean {
  let results = RESULTS.get(device);
  if (!results) {
    results = new Map();
    RESULTS.set(device, results);
  }
  for (const expression of selectors) {
    let r = results.get(expression);
    if (r === undefined) {
      const c = compileSelector(expression);
      r = c.ok && c.program(deviceBinding(device));
      results.set(expression, r);
    }
    if (!r) return false;
  }
  return true;
}

/** Forgets compiled selectors (per-device results are held weakly by their device objects). */
export function clearCompiled(): void {
  COMPILED.clear();
}
