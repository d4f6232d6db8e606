// The --manifests / --output pair of the dry-run commands (bind, fleet, topology).
import { invalidArgument } from "../errors/index.js";
import type { FlagSpec, FlagValues } from "./command.js";

export const MANIFESTS_FLAG: Record<"manifests", FlagSpec> = {
  manifests: {
    type: "string",
    multiple: true,
    description: "a directory (read recursively) or file of manifests",
    value: "DIR",
  },
};

export const JSON_OUTPUT_FLAG: Record<"output", FlagSpec> = {
  output: { type: "string", default: "json", description: "output format (json)", value: "json" },
};

/** The manifest paths, once --manifests is given and --output is json. */
export function manifestPaths(flags: FlagValues): string[] {
  const manifests = (flags.manifests as string[] | undefined) ?? [];
  if (manifests.length === 0) throw invalidArgument("--manifests", "required: a directory of manifests");
  if (flags.output !== "json") {
    throw invalidArgument("--output", `only json is supported, got "${flags.output}"`);
  }
  return manifests;
}
