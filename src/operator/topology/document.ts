// The snapshot document's text (a ConfigMap value or a webhook body) into a value for the
// validator. YAML 1.2 is a superset of JSON, so one parser reads both; one document only.
import { parse } from "yaml";

export type ParsedDocument = { ok: true; doc: unknown } | { ok: false; message: string };

export function parseSnapshotText(text: string): ParsedDocument {
  if (text.trim() === "") return { ok: false, message: "the snapshot document is empty" };
  try {
    return { ok: true, doc: parse(text) as unknown };
  } catch (err) {
    const first = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    return { ok: false, message: `the snapshot is not a YAML or JSON document: ${first}` };
  }
}
