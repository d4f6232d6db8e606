import { describe, expect, it } from "vitest";
import { ErrorCode } from "./codes.js";
import { KubemootError } from "./kubemoot-error.js";
import { httpAnswer, WIRE, wireRow } from "./wire.js";

describe("the wire table's lookups", () => {
  it("gives an error without a reason its code's first reason, and that row", () => {
    for (const code of Object.values(ErrorCode)) {
      const first = Object.keys(WIRE[code])[0];
      const err = new KubemootError(code, "x");
      expect(err.reason, code).toBe(first);
      expect(wireRow(err)).toBe((WIRE[code] as Record<string, unknown>)[first as string]);
    }
  });

  it("refuses another code's reason at compile time, and answers with the code's own row at run time", () => {
    // @ts-expect-error gpu-busy refines Busy, not NotFound
    const err = new KubemootError(ErrorCode.NotFound, "no such thing", { reason: "gpu-busy" });
    expect(wireRow(err)).toBe(WIRE[ErrorCode.NotFound]["not-found"]);
    const a = httpAnswer(err, "ollama");
    expect(a.status).toBe(404);
    expect(a.headers["x-kubemoot-reason"]).toBe("not-found");
    expect(a.body).toEqual({ error: "no such thing", reason: "not-found" });
  });

  it("answers an unknown code (another copy's, or a newer one) as internal", () => {
    const foreign = { code: "KUBEMOOT_SOMETHING_NEW", reason: "new-thing" } as never;
    expect(wireRow(foreign)).toBe(WIRE[ErrorCode.Internal].internal);
  });

  it("turns anything but a KubemootError into Internal, keeping it as the cause", () => {
    const bug = new TypeError("x is undefined");
    const err = KubemootError.from(bug);
    expect(err).toMatchObject({
      code: ErrorCode.Internal,
      reason: "internal",
      message: "internal error: x is undefined",
    });
    expect(err.cause).toBe(bug);
    const own = new KubemootError(ErrorCode.Timeout, "slow");
    expect(KubemootError.from(own)).toBe(own);
  });
});
