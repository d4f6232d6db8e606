// The settings registry (src/settings) against what documents and deploys it: docs/settings.md
// is the registry rendered; the README, docs/ and the chart name only registered variables,
// and every registered one is documented; the chart sets on each container only variables its
// command reads, with values the registry's parsers accept and the registry's defaults.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ErrorCode } from "../../src/errors/index.js";
import { repoRoot } from "../../src/repo-root.js";
import { ALL_SETTINGS, type CommandName, type Setting } from "../../src/settings/index.js";
import { renderSettingsDoc } from "./settings-doc.js";

const ROOT = repoRoot();
const BY_NAME = new Map(ALL_SETTINGS.map((s) => [s.name, s]));
const CODES = new Set<string>(Object.values(ErrorCode));

function filesUnder(rel: string): string[] {
  const abs = path.join(ROOT, rel);
  if (statSync(abs).isFile()) return [rel];
  return readdirSync(abs).flatMap((e) => filesUnder(`${rel}/${e}`));
}

const DOCUMENTS = [
  "README.md",
  ...filesUnder("docs").filter((f) => f.endsWith(".md")),
  ...filesUnder("chart"),
];
const read = (rel: string) => readFileSync(path.join(ROOT, rel), "utf8");

/** Each KUBEMOOT_* token of `text`; one ending in `_` or `*` names a family (`KUBEMOOT_MODEL_*`). */
function mentions(text: string): { name: string; family: boolean }[] {
  return [...text.matchAll(/KUBEMOOT_[A-Z0-9_]*\*?/g)]
    .map((m) => m[0])
    .filter((t) => !CODES.has(t))
    .map((t) => {
      const family = t.endsWith("*") || t.endsWith("_");
      return { name: t.replace(/\*$/, ""), family };
    });
}

function known({ name, family }: { name: string; family: boolean }): boolean {
  return family ? ALL_SETTINGS.some((s) => s.name.startsWith(name)) : BY_NAME.has(name);
}

describe("docs/settings.md", () => {
  it("is the registry rendered (rewrite it with -u)", async () => {
    await expect(renderSettingsDoc()).toMatchFileSnapshot("../../docs/settings.md");
  });
});

describe("the documents name only registered variables, and every registered one", () => {
  it("reads the README, docs/ and the chart", () => {
    expect(DOCUMENTS).toContain("chart/values.yaml");
    expect(DOCUMENTS).toContain("chart/templates/deployment.yaml");
    expect(DOCUMENTS).toContain("docs/deploy.md");
    expect(mentions("`KUBEMOOT_MODEL_*`, KUBEMOOT_CREW and KUBEMOOT_INVALID_CONFIG")).toEqual([
      { name: "KUBEMOOT_MODEL_", family: true },
      { name: "KUBEMOOT_CREW", family: false },
    ]);
  });

  it("names no variable the registry does not declare", () => {
    const unknown = DOCUMENTS.flatMap((f) =>
      mentions(read(f))
        .filter((m) => !known(m))
        .map((m) => `  ${f}: ${m.name}${m.family ? "*" : ""}`),
    );
    expect([...new Set(unknown)].join("\n"), "unregistered variables").toBe("");
  });

  it("documents every registered variable", () => {
    const named = new Set(DOCUMENTS.flatMap((f) => mentions(read(f)).map((m) => m.name)));
    expect(ALL_SETTINGS.filter((s) => !named.has(s.name)).map((s) => s.name)).toEqual([]);
  });
});

/** `- name: KUBEMOOT_X` entries of a template, with the value that follows when it is one. */
function templateEnv(text: string): { name: string; value: string | undefined }[] {
  const out: { name: string; value: string | undefined }[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const m = /^\s*- name: (KUBEMOOT_[A-Z0-9_]+)\s*$/.exec(line);
    if (!m) return;
    const next = /^\s*value: (.*)$/.exec(lines[i + 1] ?? "");
    out.push({ name: m[1]!, value: next?.[1]?.trim() });
  });
  return out;
}

/** A literal YAML scalar, or the values.yaml key it is taken from (`{{ .Values.a.b | quote }}`). */
function chartValue(raw: string, values: unknown): string | undefined {
  const ref = /^\{\{ \.Values\.([\w.]+) \| quote \}\}$/.exec(raw);
  if (ref) {
    let v: unknown = values;
    for (const key of ref[1]!.split(".")) v = (v as Record<string, unknown> | undefined)?.[key];
    return v === undefined || v === null ? undefined : String(v);
  }
  if (raw.includes("{{")) return undefined;
  return String(parseYaml(raw));
}

function readOn(command: CommandName, name: string): Setting | undefined {
  const s = BY_NAME.get(name);
  return s?.readBy.includes(command) ? s : undefined;
}

describe("the chart", () => {
  const values = parseYaml(read("chart/values.yaml")) as Record<string, unknown>;
  // Every template that sets env sets it on the operator's container (the webhook's sidecar
  // env is the webhook's, checked in src/operator/webhook).
  const templates = filesUnder("chart/templates").filter((f) => /\.(yaml|tpl)$/.test(f));
  const env = templates.flatMap((f) => templateEnv(read(f)).map((e) => ({ file: f, ...e })));

  it("finds the operator's env", () => {
    expect(env.map((e) => e.name)).toContain("KUBEMOOT_LEADER_ELECT");
  });

  it("sets on the operator only variables the operator reads", () => {
    const bad = env.filter((e) => !readOn("operator", e.name)).map((e) => `  ${e.file}: ${e.name}`);
    expect(bad.join("\n"), "variables the operator does not read").toBe("");
  });

  it("sets values the registry accepts, its defaults by default", () => {
    for (const e of env) {
      const s = readOn("operator", e.name);
      const v = e.value === undefined ? undefined : chartValue(e.value, values);
      if (!s || v === undefined || v === "") continue;
      expect(() => s.parse(v), `${e.file}: ${e.name}=${v}`).not.toThrow();
      const ref = e.value?.includes(".Values.");
      if (ref && s.default !== undefined && s.default !== "") {
        expect(s.parse(v), `chart/values.yaml default of ${e.name}`).toEqual(s.default);
      }
    }
  });

  it("passes extraEnv only of variables the receiving command reads, with values it accepts", () => {
    const files = ["chart/values.yaml", ...filesUnder("chart/ci").filter((f) => f.endsWith(".yaml"))];
    const bad: string[] = [];
    for (const f of files) {
      const v = parseYaml(read(f)) as Record<string, { extraEnv?: { name: string; value?: string }[] }>;
      for (const [key, command] of [
        ["sidecar", "sidecar"],
        ["operator", "operator"],
      ] as const) {
        for (const e of v[key]?.extraEnv ?? []) {
          if (!e.name.startsWith("KUBEMOOT_")) continue;
          const s = readOn(command, e.name);
          if (!s) bad.push(`  ${f}: ${key}.extraEnv ${e.name}`);
          else expect(() => s.parse(String(e.value ?? "")), `${f}: ${e.name}`).not.toThrow();
        }
      }
    }
    expect(bad.join("\n"), `variables their command does not read`).toBe("");
  });
});
