// Reading manifest documents from disk: every *.yaml, *.yml and *.json file under the given
// paths, recursively, in sorted order (hidden files and directories skipped, symlinks followed
// once), each document parsed but not interpreted.
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { extname, join, relative, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { invalidArgument } from "../errors/index.js";
import type { ManifestIssue } from "./issues.js";

const EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/** Manifest files under `paths` (files or directories), sorted within each directory. */
export async function manifestFiles(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const visited = new Set<string>();
  const walk = async (path: string, explicit: boolean): Promise<void> => {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(path);
    } catch {
      if (explicit) throw invalidArgument("manifests", `${path}: no such file or directory`);
      return; // a dangling symlink inside a directory
    }
    const real = await realpath(path);
    if (visited.has(real)) return;
    visited.add(real);
    if (info.isDirectory()) {
      const entries = (await readdir(path)).filter((e) => !e.startsWith(".")).sort();
      for (const e of entries) await walk(join(path, e), false);
    } else if (explicit || EXTENSIONS.has(extname(path).toLowerCase())) {
      out.push(path);
    }
  };
  for (const p of paths) await walk(p, true);
  return out;
}

/** One YAML/JSON document, parsed but not interpreted (readers of other kinds take these). */
export interface RawDocument {
  file: string;
  /** 1-based position in the file. */
  document: number;
  value: unknown;
}

/**
 * Every document of every manifest file under `paths` (files under `ignore` skipped), as plain
 * values; a document that is not YAML becomes an issue naming the file and document.
 */
export async function readDocuments(
  paths: readonly string[],
  ignore: readonly string[] = [],
): Promise<{ docs: RawDocument[]; issues: ManifestIssue[] }> {
  const skip = ignore.map((p) => resolve(p));
  const docs: RawDocument[] = [];
  const issues: ManifestIssue[] = [];
  for (const file of await manifestFiles(paths)) {
    const abs = resolve(file);
    if (skip.some((d) => abs === d || !relative(d, abs).startsWith(".."))) continue;
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      issues.push({ file, document: 0, field: "", message: `cannot read: ${(err as Error).message}` });
      continue;
    }
    parseAllDocuments(text).forEach((doc, i) => {
      const document = i + 1;
      if (doc.errors.length > 0) {
        issues.push({
          file,
          document,
          field: "",
          message: `not YAML: ${doc.errors[0]!.message.split("\n")[0]}`,
        });
        return;
      }
      docs.push({ file, document, value: doc.toJS({ maxAliasCount: 100 }) });
    });
  }
  return { docs, issues };
}
