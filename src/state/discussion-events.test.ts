import { describe, expect, it } from "vitest";
import { decodeDiscussionEvent, encodeDiscussionEvent } from "./discussion-events.js";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("discussion events", () => {
  it("round-trip on kubemoot.discussion.<namespace>.<thread>.<event>", () => {
    const m = encodeDiscussionEvent({ kind: "open", threadId: "t-1_x", agent: "crew/a" })!;
    expect(m.subject).toBe("kubemoot.discussion.crew.t-1_x.open");
    expect(decodeDiscussionEvent(m.subject, m.data).event).toEqual({
      kind: "open",
      threadId: "t-1_x",
      agent: "crew/a",
    });
  });

  it("are not sent for a thread id, or an agent's namespace, that cannot be one subject token", () => {
    for (const threadId of ["a.b", "a*", ">", "a b", "", "x".repeat(129)])
      expect(encodeDiscussionEvent({ kind: "close", threadId, agent: "crew/a" }), threadId).toBeUndefined();
    for (const agent of ["no-namespace", "cr.ew/a", "crew*/a", "/a", "crew/a/b"])
      expect(encodeDiscussionEvent({ kind: "open", threadId: "t", agent }), agent).toBeUndefined();
  });

  it("skip, with a reason, whatever is not a version-1 event of ours", () => {
    const ok = bytes('{"v":1,"agent":"crew/a"}');
    const cases: [string, Uint8Array, RegExp][] = [
      ["kubemoot.other.crew.t.open", ok, /not a discussion subject/],
      ["kubemoot.discussion.t.open", ok, /not a discussion subject/],
      ["kubemoot.discussion.crew.t.open.x", ok, /not a discussion subject/],
      ["kubemoot.discussion.crew.t.reopen", ok, /unknown event/],
      ["kubemoot.discussion.crew.t.open", bytes("{nope"), /not JSON/],
      ["kubemoot.discussion.crew.t.open", bytes('{"v":2,"agent":"crew/a"}'), /not version 1/],
      ["kubemoot.discussion.crew.t.open", bytes('{"v":1,"agent":"no-namespace"}'), /namespace\/name/],
      ["kubemoot.discussion.crew.t.open", bytes('{"v":1,"agent":7}'), /namespace\/name/],
      // Another namespace's agent: a user allowed `crew`'s subjects speaks for `crew`'s agents only.
      ["kubemoot.discussion.crew.t.close", bytes('{"v":1,"agent":"other/a"}'), /subject's namespace/],
    ];
    for (const [subject, data, why] of cases) {
      const d = decodeDiscussionEvent(subject, data);
      expect(d.event, subject).toBeUndefined();
      expect(d.reason, subject).toMatch(why);
    }
  });
});
