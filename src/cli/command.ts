// A tiny command framework over node:util parseArgs: each subcommand declares its flags with
// a default, an optional environment variable and a description (those of a KUBEMOOT_*
// variable come from the settings registry, ./setting-flags.ts), and the variables it reads
// besides, and gets --help, env fallback and clear validation messages for free.
import { parseArgs } from "node:util";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { parseBoolean, parseNumber, type Setting } from "../settings/index.js";
import type { SidecarHost } from "./host.js";

export interface FlagSpec {
  type: "string" | "boolean";
  /** Shown in --help and used when neither the flag nor its env variable is set. */
  default?: string | boolean;
  /** Environment variable read when the flag is absent. */
  env?: string;
  /** A variable the flag wins over that the command reads itself (shown in --help only). */
  overrides?: string;
  description: string;
  multiple?: boolean;
  /** Placeholder in --help, e.g. HOST:PORT. */
  value?: string;
}

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

export interface Command {
  name: string;
  summary: string;
  /** Extra paragraphs for --help. */
  details?: string;
  flags: Record<string, FlagSpec>;
  /** The settings the command reads besides its flags' variables (listed by --help). */
  env?: readonly Setting[];
  /** `host` starts the sidecar's processes (src/cli/host.ts). */
  run(flags: FlagValues, positionals: string[], host: SidecarHost): Promise<number>;
}

export function renderHelp(cmd: Command): string {
  const lines = [`Usage: kubemoot-scheduler ${cmd.name} [flags]`, "", cmd.summary];
  if (cmd.details) lines.push("", cmd.details);
  lines.push("", "Flags:");
  const entries = Object.entries(cmd.flags);
  entries.push(["help", { type: "boolean", description: "show this help" }]);
  for (const [name, spec] of entries) {
    const head = `  --${name}${spec.type === "string" ? ` ${spec.value ?? "VALUE"}` : ""}`;
    const extra: string[] = [];
    if (spec.default !== undefined && spec.default !== "") extra.push(`default ${String(spec.default)}`);
    if (spec.env) extra.push(`env ${spec.env}`);
    if (spec.overrides) extra.push(`wins over ${spec.overrides}`);
    if (spec.multiple) extra.push("repeatable");
    lines.push(`${head.padEnd(34)} ${spec.description}${extra.length ? ` (${extra.join("; ")})` : ""}`);
  }
  if (cmd.env && cmd.env.length > 0) {
    lines.push("", "Environment (besides the flags' variables):");
    for (const s of cmd.env) {
      lines.push(`  ${s.name}`, `      ${s.help}${s.defaultText ? ` (default ${s.defaultText})` : ""}`);
    }
  }
  return lines.join("\n");
}

/** Parses argv for a command; flags win over env, env over defaults. Throws InvalidArgument. */
export function parseFlags(
  cmd: Command,
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): { values: FlagValues; positionals: string[]; help: boolean } {
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {
    help: { type: "boolean" },
  };
  for (const [name, spec] of Object.entries(cmd.flags)) {
    options[name] = { type: spec.type, ...(spec.multiple ? { multiple: true } : {}) };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new KubemootError(ErrorCode.InvalidArgument, `${cmd.name}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const values: FlagValues = {};
  for (const [name, spec] of Object.entries(cmd.flags)) {
    const given = parsed.values[name];
    if (given !== undefined) {
      values[name] = given as string | boolean | string[];
      continue;
    }
    const fromEnv = spec.env ? env[spec.env] : undefined;
    if (fromEnv !== undefined && fromEnv !== "") {
      if (spec.type === "boolean") {
        values[name] = parseBoolean(fromEnv, spec.env ?? name);
      } else {
        values[name] = spec.multiple ? fromEnv.split(",") : fromEnv;
      }
      continue;
    }
    values[name] = spec.default ?? (spec.multiple ? [] : undefined);
  }
  return { values, positionals: parsed.positionals, help: parsed.values.help === true };
}

/** A numeric flag's value, validated: a clear InvalidConfig naming the flag when it is not a number ≥ min. */
export function numberFlag(flags: FlagValues, name: string, min: number): number {
  const raw = flags[name];
  return parseNumber(typeof raw === "string" ? raw : "", `--${name}`, min);
}

/** Providers are probed no more often than this (ms): a tighter loop only burns CPU. */
export const MIN_PROBE_INTERVAL_MS = 100;
