// Several observers on one scheduler (docs/design.md §6): metrics, decision records, logs. Each
// hook of the result calls that hook of every part that has it, in order; a hook that throws
// does not keep the others from running, and never reaches the call.
import type { SchedulerHooks } from "./types.js";

type HookName = Exclude<keyof SchedulerHooks, "log">;

const NAMES: readonly HookName[] = [
  "onPlace",
  "onDecision",
  "onRelease",
  "onClaimLost",
  "onEvict",
  "onReleaseDeleteFailed",
];

export function composeHooks(...parts: SchedulerHooks[]): SchedulerHooks {
  const out: SchedulerHooks = {};
  for (const name of NAMES) {
    const fns = parts.flatMap((p) => (p[name] === undefined ? [] : [p[name].bind(p)]));
    if (fns.length === 0) continue;
    (out as Record<string, unknown>)[name] = (...args: unknown[]) => {
      for (const f of fns) {
        try {
          (f as (...a: unknown[]) => void)(...args);
        } catch {
          // an observer's failure is its own
        }
      }
    };
  }
  const log = parts.find((p) => p.log !== undefined)?.log;
  if (log !== undefined) out.log = log;
  return out;
}
