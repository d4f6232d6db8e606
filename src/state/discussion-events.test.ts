import { describe, expect, it } from "vitest";
import { decodeDiscussionEvent, encodeDiscussionEvent } from "./discussion-events.js";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("discussion events", () => {
  it("round-trip on kubemoot.discussion.<thread>.<event>", () => {
    const m = encodeDiscussionEvent({ kind: "open", threadId: "t-1_x", agent: "crew/a" })!;
    expect(m.subject).toBe("kubemoot.discussion.t-1_x.open");
    expect(decodeDiscussionEvent(m.subject, m.data).event).toEqual({
      kind: "open",
      threadId: "t-1_x",
      agent: "crew/a",
    });
  });

  it("are not sent for a thread id that cannot be one subject token", () => {
    for (const threadId of ["a.b", "a*", ">", "a b", "", "x".repeat(129)])
      expect(encodeDiscussionEvent({ kind: "close", threadId, agent: "crew/a" }), threadId).toBeUndefined();
  });

  it("skip, with a reason, whatever is not a version-1 event of ours", () => {
    const ok = bytes('{"v":1,"agent":"crew/a"}');
    const cases: [string, Uint8Array, RegExp][] = [
      ["kubemoot.other.t.open", ok, /not a discussion subject/],
      ["kubemoot.discussion.t.open.x", ok, /not a discussion subject/],
      ["kubemoot.discussion.t.reopen", ok, /unknown event/],
      ["kubemoot.discussion.t.open", bytes("{nope"), /not JSON/],
      ["kubemoot.discussion.t.open", bytes('{"v":2,"agent":"crew/a"}'), /not version 1/],
      ["kubemoot.discussion.t.open", bytes('{"v":1,"agent":"no-namespace"}'), /namespace\/name/],
      ["kubemoot.discussion.t.open", bytes('{"v":1,"agent":7}'), /namespace\/name/],
    ];
    for (const [subject, data, why] of cases) {
      const d = decodeDiscussionEvent(subject, data);
      expect(d.event, subject).toBeUndefined();
      expect(d.reason, subject).toMatch(why);
    }
  });
});
