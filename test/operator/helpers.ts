// Shared helpers of the operator's integration tests.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { Logger } from "../../src/log/index.js";

export const EXAMPLES = join(import.meta.dirname, "..", "..", "examples");

/** Polls `check` until it returns a truthy value (returned) or throws after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 5_000,
  intervalMs = 10,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every YAML document of the example directories (kubemoot.ai objects only). */
export async function exampleObjects(...dirs: string[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const dir of dirs) {
    const files = (await readdir(join(EXAMPLES, dir))).filter((f) => f.endsWith(".yaml")).sort();
    for (const f of files) {
      for (const doc of parseAllDocuments(await readFile(join(EXAMPLES, dir, f), "utf8"))) {
        const v = doc.toJS() as Record<string, unknown> | null;
        if (v && String(v.apiVersion).startsWith("kubemoot.ai/")) out.push(v);
      }
    }
  }
  return out;
}

export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  obj: Record<string, unknown>;
  msg: string;
}

/** A pino-shaped logger that keeps every line (and prints nothing). */
export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine["level"]) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj: obj as Record<string, unknown>, msg: msg ?? "" });
    };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
