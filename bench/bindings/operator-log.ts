// The operator's side of a rebind in `bench bindings` (docs/benchmarks.md "bindings"): the
// discussion binder logs every changed (thread, phase) at info, with pino's `time` (epoch ms),
// after it has bound every live thread and before it writes the values. The first such line
// for a key after the kill tells when the binder had decided (detection plus the bind), so a
// key's latency splits into that and the rest (the KV write and the watch delivery).

export interface BinderLine {
  key: string;
  provider: string | undefined;
  /** Epoch ms. */
  time: number;
}

/** The binder's decision lines in `text` (whole JSON lines; anything else is skipped). */
export function binderLines(text: string): BinderLine[] {
  const out: BinderLine[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes('"discussion binder: ')) continue;
    let v: { msg?: unknown; thread?: unknown; phase?: unknown; provider?: unknown; time?: unknown };
    try {
      v = JSON.parse(line) as typeof v;
    } catch {
      continue;
    }
    if (typeof v.thread !== "string" || typeof v.phase !== "string" || typeof v.time !== "number") continue;
    if (typeof v.msg !== "string" || !v.msg.startsWith("discussion binder: ")) continue;
    out.push({
      key: `${v.thread}.${v.phase}`,
      provider: typeof v.provider === "string" ? v.provider : undefined,
      time: v.time,
    });
  }
  return out;
}

/**
 * Seconds from `t0Wall` (epoch ms) until the binder logged each of `keys` off `provider`: the
 * first line per key at or after t0 that names another provider (or none: unschedulable).
 */
export function decidedAfter(
  text: string,
  keys: ReadonlySet<string>,
  provider: string,
  t0Wall: number,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of binderLines(text)) {
    if (!keys.has(l.key) || out.has(l.key) || l.time < t0Wall || l.provider === provider) continue;
    out.set(l.key, (l.time - t0Wall) / 1000);
  }
  return out;
}
