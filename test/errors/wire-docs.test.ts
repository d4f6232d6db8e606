// The proxy's README lists every reason with its status (sidecar/proxy/README.md, "Errors"): the
// list must be the wire table's (src/errors/wire.ts), whole, with no status of its own.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { WIRE, type WireRow } from "../../src/errors/index.js";
import { repoRoot } from "../../src/repo-root.js";

const rows = new Map<string, WireRow>(
  Object.values(WIRE).flatMap((reasons) => Object.entries(reasons as Record<string, WireRow>)),
);

/** Each reason the README's errors table names, with the status of its line. */
function documented(): Array<{ reason: string; status: number }> {
  const text = readFileSync(path.join(repoRoot(), "sidecar/proxy/README.md"), "utf8");
  const section = text.slice(text.indexOf("## Errors"), text.indexOf("## Logs"));
  const out: Array<{ reason: string; status: number }> = [];
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const status = Number(cells[1]);
    if (!Number.isInteger(status) || status < 400) continue;
    const named = [
      ...(cells
        .slice(2)
        .join(" ")
        .matchAll(/`([a-z-]+)`/g) ?? []),
    ].map((m) => m[1] as string);
    for (const reason of named) if (rows.has(reason)) out.push({ reason, status });
  }
  return out;
}

describe("the proxy's documented errors", () => {
  it("name every reason of the wire table, each with the table's status", () => {
    const docs = documented();
    expect(docs.length).toBeGreaterThan(10);
    expect(docs.filter((d) => rows.get(d.reason)?.http !== d.status)).toEqual([]);
    expect([...rows.keys()].filter((r) => !docs.some((d) => d.reason === r))).toEqual([]);
  });
});
