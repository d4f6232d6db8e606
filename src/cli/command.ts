// A tiny command framework over node:util parseArgs: each subcommand declares its flags with
// a default, an optional environment variable and a description, and gets --help, env
// fallback and clear validation messages for free.
import { parseArgs } from "node:util";
import { ErrorCode, KubemootError } from "../errors/index.js";

export interface FlagSpec {
  type: "string" | "boolean";
  /** Shown in --help and used when neither the flag nor its env variable is set. */
  default?: string | boolean;
  /** Environment variable read when the flag is absent. */
  env?: string;
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
  run(flags: FlagValues, positionals: string[]): Promise<number>;
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
    if (spec.multiple) extra.push("repeatable");
    lines.push(`${head.padEnd(34)} ${spec.description}${extra.length ? ` (${extra.join("; ")})` : ""}`);
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
        if (!/^(1|0|true|false|yes|no)$/i.test(fromEnv)) {
          throw new KubemootError(
            ErrorCode.InvalidConfig,
            `${spec.env}: expected true or false, got "${fromEnv}"`,
            {
              field: spec.env,
            },
          );
        }
        values[name] = /^(1|true|yes)$/i.test(fromEnv);
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
  const n = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isFinite(n) || n < min) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `--${name}: expected a number ≥ ${min}, got "${String(raw)}"`,
      {
        field: `--${name}`,
      },
    );
  }
  return n;
}

/** Providers are probed no more often than this (ms): a tighter loop only burns CPU. */
export const MIN_PROBE_INTERVAL_MS = 100;
