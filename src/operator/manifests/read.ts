// Reading the binder's manifests from disk (the files are found by src/manifests).
import { readFile } from "node:fs/promises";
import type { ProviderState } from "../../core/index.js";
import { invalidArgument } from "../../errors/index.js";
import { manifestError, manifestFiles } from "../../manifests/index.js";
import { type ManifestSet, type ManifestSource, type ParsedManifests, parseManifests } from "./parse.js";

/** Reads and parses the manifests under `paths`; invalid documents come back as issues. */
export async function readManifests(paths: readonly string[]): Promise<ParsedManifests> {
  const files = await manifestFiles(paths);
  const sources: ManifestSource[] = [];
  for (const file of files) sources.push({ file, text: await readFile(file, "utf8") });
  return parseManifests(sources);
}

/** Like readManifests, but any issue throws a KubemootError (InvalidManifest) naming them. */
export async function loadManifests(paths: readonly string[]): Promise<ManifestSet> {
  const { set, issues } = await readManifests(paths);
  if (issues.length > 0) throw manifestError(issues);
  return set;
}

/** A provider state file (JSON or YAML): an object keyed by provider name, a list, or one state. */
export async function loadProviderStateFile(file: string): Promise<ProviderState[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw invalidArgument("state", `${file}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  const { set, issues } = parseManifests([{ file, text }]);
  const objects = set.models.length + set.providers.length + set.agents.length + set.policies.length;
  if (objects + set.archetypes.length + set.skipped.length > 0) {
    issues.push({
      file,
      document: 1,
      field: "",
      message: "expected provider state only, found Kubernetes objects",
    });
  }
  if (issues.length > 0) throw manifestError(issues);
  return set.providerStates;
}
