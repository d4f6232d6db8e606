// Fault injection: rules set at start (--fault, config file) or at run time
// (POST /_emulator/faults, EmulatorHandle.setFaults). Durations are emulated ms, so they
// scale with the time scale like everything else.
//
//   refuse            stop listening (connections refused) for `ms`, or until cleared in
//                     process (EmulatorHandle.setFaults/reset: the admin route is refused
//                     too); open connections go on; probability/count/model/path do not apply
//   reset             destroy the connection as soon as a request arrives
//   delay             hold each request `ms` (default 1000) before handling it
//   error             answer `status` (default 500) {"error": message} instead of handling it
//   drop              cut the connection after `afterTokens` (default 1) tokens of an answer
//   error-mid-stream  end the answer after `afterTokens` (default 1) tokens with a final
//                     {"error"} line (a 500 when not streaming)
//   stall             stop generating after `afterTokens` tokens for `ms` (default: until the
//                     client goes away); the slot stays taken
//
// Every rule may carry `probability` (0..1, default 1, drawn from a seeded generator),
// `count` (how many times it applies before it is spent; default unlimited), `model` and
// `path` (a path prefix) to narrow where it applies. Admin routes (/_emulator/*) are exempt.
import { invalidArgument } from "../errors/index.js";
import { mulberry32, type Random } from "../prng/index.js";

export const FAULT_KINDS = [
  "refuse",
  "reset",
  "delay",
  "error",
  "drop",
  "error-mid-stream",
  "stall",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  kind: FaultKind;
  probability?: number;
  count?: number;
  ms?: number;
  afterTokens?: number;
  status?: number;
  message?: string;
  model?: string;
  path?: string;
}

const NUMERIC = ["probability", "count", "ms", "afterTokens", "status"] as const;
const TEXT = ["message", "model", "path"] as const;

/** Validates one rule from JSON or YAML; throws InvalidArgument naming the field. */
export function validateFaultRule(value: unknown, where = "fault"): FaultRule {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidArgument(where, "must be an object with a kind");
  }
  const v = value as Record<string, unknown>;
  if (typeof v.kind !== "string" || !(FAULT_KINDS as readonly string[]).includes(v.kind)) {
    throw invalidArgument(
      `${where}.kind`,
      `must be one of ${FAULT_KINDS.join(", ")}, got ${JSON.stringify(v.kind)}`,
    );
  }
  const rule: FaultRule = { kind: v.kind as FaultKind };
  for (const key of Object.keys(v)) {
    if (key === "kind") continue;
    if ((NUMERIC as readonly string[]).includes(key)) {
      const n = v[key];
      if (typeof n !== "number" || !Number.isFinite(n) || n < 0) {
        throw invalidArgument(`${where}.${key}`, `must be a non-negative number, got ${JSON.stringify(n)}`);
      }
      if (key === "probability" && n > 1)
        throw invalidArgument(`${where}.probability`, "must be within 0..1");
      if ((key === "count" || key === "afterTokens" || key === "status") && !Number.isInteger(n)) {
        throw invalidArgument(`${where}.${key}`, "must be an integer");
      }
      if (key === "status" && (n < 100 || n > 599))
        throw invalidArgument(`${where}.status`, "must be 100..599");
      (rule as unknown as Record<string, unknown>)[key] = n;
    } else if ((TEXT as readonly string[]).includes(key)) {
      if (typeof v[key] !== "string") throw invalidArgument(`${where}.${key}`, "must be a string");
      (rule as unknown as Record<string, unknown>)[key] = v[key];
    } else {
      throw invalidArgument(`${where}.${key}`, "unknown field");
    }
  }
  return rule;
}

export function validateFaultRules(value: unknown, where = "faults"): FaultRule[] {
  if (!Array.isArray(value)) throw invalidArgument(where, "must be an array of fault rules");
  return value.map((r, i) => validateFaultRule(r, `${where}[${i}]`));
}

/** Parses `--fault KIND[:key=value,...]`, e.g. `error:count=2`, `stall:afterTokens=3,ms=5000`. */
export function parseFaultFlag(text: string): FaultRule {
  const colon = text.indexOf(":");
  const kind = (colon < 0 ? text : text.slice(0, colon)).trim();
  const raw: Record<string, unknown> = { kind };
  if (colon >= 0) {
    for (const part of text.slice(colon + 1).split(",")) {
      if (part.trim() === "") continue;
      const eq = part.indexOf("=");
      if (eq <= 0) throw invalidArgument("--fault", `expected key=value, got "${part}"`);
      const key = part.slice(0, eq).trim();
      const val = part.slice(eq + 1).trim();
      raw[key === "after" ? "afterTokens" : key] =
        (TEXT as readonly string[]).includes(key) || val === "" || !Number.isFinite(Number(val))
          ? val
          : Number(val);
    }
  }
  return validateFaultRule(raw, "--fault");
}

export interface FaultContext {
  path: string;
  model?: string | undefined;
}

export class FaultSet {
  private rules: FaultRule[] = [];
  private random: Random;

  constructor(
    rules: readonly FaultRule[] = [],
    private readonly seed = 1,
  ) {
    this.random = mulberry32(seed); // seeded, so probabilistic faults repeat run to run
    this.set(rules);
  }

  set(rules: readonly FaultRule[]): void {
    this.rules = rules.map((r) => ({ ...r }));
    this.random = mulberry32(this.seed);
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  has(kind: FaultKind): FaultRule | undefined {
    return this.rules.find((r) => r.kind === kind);
  }

  /**
   * The first rule of `kind` that matches the request and wins its draw; spends one of its
   * `count` (a spent rule is removed).
   */
  take(kind: FaultKind, ctx: FaultContext): FaultRule | undefined {
    for (const rule of this.rules) {
      if (rule.kind !== kind) continue;
      if (rule.path !== undefined && !ctx.path.startsWith(rule.path)) continue;
      if (rule.model !== undefined && rule.model !== ctx.model) continue;
      if (rule.count !== undefined && rule.count <= 0) continue;
      const p = rule.probability ?? 1;
      if (p < 1 && this.random() >= p) continue;
      if (rule.count !== undefined) {
        rule.count -= 1;
        if (rule.count <= 0) this.rules = this.rules.filter((r) => r !== rule);
      }
      return { ...rule };
    }
    return undefined;
  }

  remove(kind: FaultKind): void {
    this.rules = this.rules.filter((r) => r.kind !== kind);
  }
}
