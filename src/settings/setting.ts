// What the registry declares of one KUBEMOOT_* variable (docs/design.md §2): its name, type,
// unit, default, help, the commands that read it, who writes it into another process's
// environment, its flag, and its parser. Pure: nothing here reads the environment; readers
// pass it in, so that the pure folders (src/binding) may import the names.
import { ErrorCode, KubemootError } from "../errors/index.js";

/** The commands of `kubemoot-scheduler` (src/cli/commands). */
export const COMMANDS = [
  "sidecar",
  "operator",
  "standalone",
  "demo",
  "emulate",
  "bind",
  "simulate",
  "fleet",
  "topology",
  "gguf",
  "engine",
] as const;
export type CommandName = (typeof COMMANDS)[number];

/**
 * Who writes a variable into another process's environment: the operator (the binding env of
 * an agent's Deployment) or its injection webhook (the sidecar container). Such a variable is a
 * name in the protocol between them, declared here like any setting.
 */
export type Writer = "operator" | "webhook";

/** How a value reads, for --help and docs/settings.md. */
export type SettingType =
  | "string"
  | "boolean"
  | "number"
  | "choice"
  | "list"
  | "json"
  | "file"
  | "address"
  | "url"
  | "duration"
  | "reference";

export interface Setting<T = unknown> {
  /** The variable: KUBEMOOT_… */
  readonly name: string;
  readonly type: SettingType;
  readonly unit?: "seconds" | "ms" | "bytes" | "points";
  /** The value when the variable (and its flag) is unset or blank. */
  readonly default: T;
  /** The default as --help and the docs state it ("" = none). */
  readonly defaultText: string;
  /** Per-command defaults that differ from `default` (the demo logs less). */
  readonly defaultFor: Readonly<Partial<Record<CommandName, T>>>;
  readonly help: string;
  readonly readBy: readonly CommandName[];
  readonly writtenBy: readonly Writer[];
  /** The flag that wins over the variable, without its dashes. */
  readonly flag?: string;
  /** --help's placeholder for the flag's value, e.g. HOST:PORT. */
  readonly placeholder?: string;
  /**
   * `raw` checked and converted; undefined gives the default. A bad value is an InvalidConfig
   * naming `source` (the variable unless told, e.g. the flag it came from).
   */
  parse(raw: string | undefined, source?: string): T;
}

export interface SettingSpec<T> {
  name: string;
  type: SettingType;
  unit?: Setting<T>["unit"];
  default: T;
  defaultText?: string;
  defaultFor?: Partial<Record<CommandName, T>>;
  help: string;
  readBy: readonly CommandName[];
  writtenBy?: readonly Writer[];
  flag?: string;
  placeholder?: string;
  /** Parses a value that is present (a flag may be given as ""). */
  parseValue(raw: string, source: string): T;
}

export function defineSetting<T>(spec: SettingSpec<T>): Setting<T> {
  const { parseValue, ...rest } = spec;
  return {
    ...rest,
    defaultText: spec.defaultText ?? (spec.default === undefined ? "" : String(spec.default)),
    defaultFor: spec.defaultFor ?? {},
    writtenBy: spec.writtenBy ?? [],
    parse: (raw, source = spec.name) => (raw === undefined ? spec.default : parseValue(raw, source)),
  };
}

/** A text setting: the value trimmed; "" when unset unless told. */
export function defineText(
  spec: Omit<SettingSpec<string>, "parseValue" | "type" | "default"> & {
    type?: SettingType;
    default?: string;
  },
): Setting<string> {
  return defineSetting({ type: "string", default: "", ...spec, parseValue: (raw) => raw.trim() });
}

/** A setting's value in `env`; a blank variable counts as unset. */
export function readSetting<T>(env: Readonly<Record<string, string | undefined>>, s: Setting<T>): T {
  const raw = env[s.name];
  return s.parse(raw === undefined || raw.trim() === "" ? undefined : raw);
}

export function invalidSetting(source: string, message: string): KubemootError {
  return new KubemootError(ErrorCode.InvalidConfig, `${source}: ${message}`, { field: source });
}

/** A finite number ≥ `min`. */
export function parseNumber(raw: string, source: string, min: number): number {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n < min) {
    const bound = min === Number.NEGATIVE_INFINITY ? "" : ` ≥ ${min}`;
    throw invalidSetting(source, `expected a number${bound}, got "${raw}"`);
  }
  return n;
}

/** true/false, yes/no or 1/0, in any case. */
export function parseBoolean(raw: string, source: string): boolean {
  const v = raw.trim();
  if (/^(1|true|yes)$/i.test(v)) return true;
  if (/^(0|false|no)$/i.test(v)) return false;
  throw invalidSetting(source, `expected true or false, got "${v}"`);
}

/** One of `values`, compared as written (trimmed). */
export function parseChoice<V extends string | number>(raw: string, source: string, values: readonly V[]): V {
  const v = raw.trim();
  const found = values.find((c) => String(c) === v);
  if (found === undefined) {
    const names = values.map(String);
    const list = names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names.join("");
    throw invalidSetting(source, `expected ${list}, got "${raw}"`);
  }
  return found;
}

const AGENT_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-zA-Z0-9]([-a-zA-Z0-9._]*[a-zA-Z0-9])?$/;

/** Whether `s` is a "namespace/name" reference (an agent or a crew). */
export function isAgentRef(s: string): boolean {
  return AGENT_RE.test(s);
}
