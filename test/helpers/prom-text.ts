// Reads Prometheus text exposition for tests: the value of a sample by metric name (and labels).

/** Every sample of `name` as [labels, value]. */
export function samples(text: string, name: string): Array<[Record<string, string>, number]> {
  const out: Array<[Record<string, string>, number]> = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line.trim());
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1] as string] = l[2] as string;
    out.push([labels, Number(m[3])]);
  }
  return out;
}

/** The single value of `name` (throws when absent). */
export function value(text: string, name: string): number {
  const s = samples(text, name);
  if (s.length === 0) throw new Error(`metric ${name} absent`);
  return (s[0] as [Record<string, string>, number])[1];
}

export async function scrape(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}
