// Problems found while reading manifests, each naming the file, the document, the object and
// the field, so that every reader (binder kinds, fleet, topology) reports alike.
import { ErrorCode, KubemootError } from "../errors/index.js";

export interface DocumentRef {
  file: string;
  /** 1-based position of the document in its file. */
  document: number;
  kind?: string;
  /** `<ns>/<name>` or `<name>`. */
  object?: string;
}

export interface ManifestIssue extends DocumentRef {
  /** e.g. `spec.rules[0].prefer[1].weight`; empty for the document as a whole. */
  field: string;
  message: string;
}

/** `file (document 2, Model kubemoot/qwen3-32b): spec.vramMib: expected …`. */
export function formatIssue(i: ManifestIssue): string {
  const what = [`document ${i.document}`, i.kind && i.object ? `${i.kind} ${i.object}` : i.kind]
    .filter(Boolean)
    .join(", ");
  return `${i.file} (${what}): ${i.field ? `${i.field}: ` : ""}${i.message}`;
}

/** The error thrown for invalid manifests: every issue, one per line (the first 50). */
export function manifestError(issues: readonly ManifestIssue[]): KubemootError {
  const first = issues[0]!;
  const lines = issues.slice(0, 50).map(formatIssue);
  const more = issues.length > 50 ? [`… and ${issues.length - 50} more`] : [];
  const message =
    issues.length === 1
      ? `invalid manifest: ${lines[0]}`
      : [`${issues.length} invalid manifest fields:`, ...lines.map((l) => `  ${l}`), ...more].join("\n");
  return new KubemootError(ErrorCode.InvalidManifest, message, {
    field: `${first.file}${first.field ? ` ${first.field}` : ""}`,
  });
}
