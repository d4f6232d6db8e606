import { describe, expect, it } from "vitest";
import { StopMatcher } from "./stop-strings.js";

/** Feeds pieces and collects what is released, and the stop word when one completes. */
function run(stops: string[], pieces: string[]): { sent: string[]; word?: string; rest: string } {
  const m = new StopMatcher(stops);
  const sent: string[] = [];
  for (const p of pieces) {
    const r = m.push(p);
    sent.push(r.emit);
    if (r.word !== undefined) return { sent, word: r.word, rest: m.flush() };
  }
  return { sent, rest: m.flush() };
}

describe("StopMatcher", () => {
  it("releases text at once when there are no stop strings", () => {
    expect(run([], ["ab", "cd"])).toEqual({ sent: ["ab", "cd"], rest: "" });
  });

  it("holds back the start of a stop word split over pieces, and never sends any of it", () => {
    const r = run(["</end>"], ["hello </", "en", "d> more"]);
    expect(r.sent).toEqual(["hello ", "", ""]);
    expect(r.word).toBe("</end>");
    expect(r.sent.join("")).toBe("hello ");
  });

  it("sends held text once it can no longer begin a stop word", () => {
    expect(run(["STOP"], ["ab S", "x"])).toEqual({ sent: ["ab ", "Sx"], rest: "" });
  });

  it("stops at the earliest of several stop words", () => {
    const r = run(["cd", "b"], ["abcd"]);
    expect(r).toMatchObject({ sent: ["a"], word: "b" });
  });

  it("flushes what is held when the answer ends without a stop word", () => {
    expect(run(["xyz"], ["abx"])).toEqual({ sent: ["ab"], rest: "x" });
  });
});
