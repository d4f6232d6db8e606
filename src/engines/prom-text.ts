// The one reader of Prometheus text exposition (format 0.0.4) in the project: the DCGM exporter's
// and the engines' /metrics. It reads samples only (name, labels, value); HELP/TYPE lines,
// timestamps and exemplars are skipped. No npm parser is kept up to date enough to be worth a
// dependency, and samples are all that is needed.

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  /** NaN and ±Inf are kept as such; callers decide what they mean. */
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/;

function unescapeLabel(v: string): string {
  return v.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
}

function number(text: string): number {
  if (text === "+Inf" || text === "Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (text === "NaN") return Number.NaN;
  const n = Number(text);
  return text === "" ? Number.NaN : n;
}

/** One sample line, or undefined for comments, blanks and lines that are not samples. */
export function readPromLine(raw: string): PromSample | undefined {
  const line = raw.trim();
  if (line === "" || line.startsWith("#")) return undefined;
  const name = NAME.exec(line)?.[0];
  if (!name) return undefined;
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith("{")) {
    rest = rest.slice(1);
    for (;;) {
      const m = LABEL.exec(rest);
      if (!m) break;
      labels[m[1] as string] = unescapeLabel(m[2] as string);
      rest = rest.slice(m[0].length);
    }
    rest = rest.trimStart();
    if (!rest.startsWith("}")) return undefined;
    rest = rest.slice(1);
  }
  if (!/^\s/.test(rest)) return undefined;
  const value = number(rest.trim().split(/\s+/)[0] ?? "");
  if (Number.isNaN(value) && !/^\s*NaN\b/.test(rest)) return undefined;
  return { name, labels, value };
}

/** Every sample of the text (only those whose name passes `wanted`, when given). */
export function readPromSamples(text: string, wanted?: (name: string) => boolean): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split("\n")) {
    const s = readPromLine(raw);
    if (s && (!wanted || wanted(s.name))) out.push(s);
  }
  return out;
}

/**
 * The sum over all series of the first of `names` that has a finite sample, or undefined when
 * none has. Several names cover metrics renamed between an engine's versions (newest first).
 */
export function sumFirst(samples: readonly PromSample[], names: readonly string[]): number | undefined {
  for (const name of names) {
    let seen = false;
    let sum = 0;
    for (const s of samples) {
      if (s.name !== name || !Number.isFinite(s.value)) continue;
      seen = true;
      sum += s.value;
    }
    if (seen) return sum;
  }
  return undefined;
}

/** Like sumFirst, but the mean over series (ratios such as KV-cache usage, one per model or rank). */
export function meanFirst(samples: readonly PromSample[], names: readonly string[]): number | undefined {
  for (const name of names) {
    const values = samples.filter((s) => s.name === name && Number.isFinite(s.value)).map((s) => s.value);
    if (values.length > 0) return values.reduce((a, b) => a + b, 0) / values.length;
  }
  return undefined;
}
