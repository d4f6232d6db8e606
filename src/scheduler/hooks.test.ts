// Several observers on one scheduler (docs/design.md §6): each hook of composeHooks' result
// calls that hook of every part that has it, in order, with the same arguments; a part that
// throws keeps neither the others from running nor its error from staying its own.
import { describe, expect, it } from "vitest";
import { composeHooks } from "./hooks.js";
import type { SchedulerHooks } from "./types.js";

type HookName = Exclude<keyof SchedulerHooks, "log">;

/** Every hook, with the arguments a scheduler could pass it. */
const CALLS: Record<HookName, unknown[]> = {
  onPlace: [{ kind: "refused" }, undefined, 1.5, { agent: "team-a/planner" }, 250],
  onDecision: [{ decideMs: 0.3 }],
  onRelease: [{ ticketId: "t1" }],
  onClaimLost: ["rtx-4090", "lease expired"],
  onEvict: ["rtx-4090", "qwen3:8b", false, new Error("unload failed")],
  onReleaseDeleteFailed: ["rtx-4090", true, new Error("NATS is away")],
};
const NAMES = Object.keys(CALLS) as HookName[];

/** A part with every hook, recording its calls in `seen` under its own label. */
function recorder(label: string, seen: [string, HookName, unknown[]][], throws = false): SchedulerHooks {
  const part: Record<string, unknown> = {};
  for (const name of NAMES) {
    part[name] = (...args: unknown[]) => {
      seen.push([label, name, args]);
      if (throws) throw new Error(`${label} failed in ${name}`);
    };
  }
  return part as SchedulerHooks;
}

function call(h: SchedulerHooks, name: HookName): void {
  (h[name] as (...a: unknown[]) => void)(...CALLS[name]);
}

describe("composeHooks", () => {
  it("calls every hook of every part, in order, with the same arguments", () => {
    const seen: [string, HookName, unknown[]][] = [];
    const h = composeHooks(recorder("metrics", seen), recorder("records", seen), recorder("logs", seen));
    for (const name of NAMES) {
      seen.length = 0;
      call(h, name);
      expect(seen.map(([label]) => label)).toEqual(["metrics", "records", "logs"]);
      for (const [, n, args] of seen) {
        expect(n).toBe(name);
        expect(args).toHaveLength(CALLS[name].length);
        for (const [i, a] of args.entries()) expect(a).toBe(CALLS[name][i]);
      }
    }
  });

  it("keeps calling the next part when one throws, and never throws itself", () => {
    const seen: [string, HookName, unknown[]][] = [];
    const h = composeHooks(
      recorder("first", seen, true),
      recorder("second", seen),
      recorder("third", seen, true),
    );
    for (const name of NAMES) {
      seen.length = 0;
      expect(() => call(h, name)).not.toThrow();
      expect(seen.map(([label]) => label)).toEqual(["first", "second", "third"]);
    }
  });

  it("calls a part's hook as its method", () => {
    class Counter implements SchedulerHooks {
      placed = 0;
      onPlace(): void {
        this.placed++;
      }
    }
    const counter = new Counter();
    const h = composeHooks(counter, {});
    call(h, "onPlace");
    call(h, "onPlace");
    expect(counter.placed).toBe(2);
  });

  it("keeps the log of the first part that has one", () => {
    const lines: string[] = [];
    const first: SchedulerHooks["log"] = (level, msg) => lines.push(`first ${level} ${msg}`);
    const second: SchedulerHooks["log"] = (level, msg) => lines.push(`second ${level} ${msg}`);
    const h = composeHooks({ onClaimLost: () => undefined }, { log: first }, { log: second });
    expect(h.log).toBe(first);
    h.log!("warn", "claim lost");
    expect(lines).toEqual(["first warn claim lost"]);
    expect(composeHooks({}, { onPlace: () => undefined })).not.toHaveProperty("log");
  });

  it("lacks a hook no part has", () => {
    const seen: [string, HookName, unknown[]][] = [];
    const h = composeHooks({ onEvict: () => undefined }, { onRelease: () => undefined }, {});
    expect(Object.keys(h).sort()).toEqual(["onEvict", "onRelease"]);
    expect(h.onPlace).toBeUndefined();
    expect(composeHooks()).toEqual({});
    expect(composeHooks({}, {})).toEqual({});
    // Only the parts that have a hook are called for it.
    const g = composeHooks({}, recorder("only", seen));
    call(g, "onDecision");
    expect(seen).toEqual([["only", "onDecision", CALLS.onDecision]]);
  });
});
