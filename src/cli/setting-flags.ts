// Flags built from the settings registry (docs/design.md §2): a setting's flag, variable,
// default, help and placeholder are declared once in src/settings, and a command lists the
// settings it takes instead of writing them again.
import type { CommandName, Setting } from "../settings/index.js";
import type { FlagSpec, FlagValues } from "./command.js";

function flagName(s: Setting): string {
  if (!s.flag) throw new RangeError(`${s.name} has no flag`);
  return s.flag;
}

function flagSpec(command: CommandName, s: Setting, readsEnv: boolean): FlagSpec {
  const fallback = command in s.defaultFor ? s.defaultFor[command] : s.default;
  return {
    type: s.type === "boolean" ? "boolean" : "string",
    ...(s.type !== "boolean" && fallback !== undefined && fallback !== ""
      ? { default: String(fallback) }
      : {}),
    ...(readsEnv ? { env: s.name } : { overrides: s.name }),
    description: s.help,
    ...(s.placeholder ? { value: s.placeholder } : {}),
  };
}

/** The flags of `settings` as `command` takes them: flag, then variable, then default. */
export function settingFlags(command: CommandName, ...settings: Setting[]): Record<string, FlagSpec> {
  return Object.fromEntries(settings.map((s) => [flagName(s), flagSpec(command, s, true)]));
}

/**
 * The flag of a setting that is read with others (the scheduler's, by
 * schedulerConfigFromEnv): the flag wins over the variable, which parseFlags leaves alone.
 */
export function overridingFlag(command: CommandName, s: Setting): Record<string, FlagSpec> {
  return { [flagName(s)]: flagSpec(command, s, false) };
}

/** What its flag was given, as written; undefined when absent (an overriding flag's variable then holds). */
export function givenFlag(flags: FlagValues, s: Setting): string | undefined {
  const raw = flags[flagName(s)];
  return typeof raw === "string" ? raw : undefined;
}

/** A setting's value from its flag (or the variable or default parseFlags put there); errors name the flag. */
export function settingFromFlag<T>(flags: FlagValues, s: Setting<T>): T {
  const raw = flags[flagName(s)];
  if (typeof raw === "boolean") return raw as T;
  return s.parse(typeof raw === "string" ? raw : undefined, `--${flagName(s)}`);
}
