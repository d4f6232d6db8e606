// The web view's query parameters (docs/web-view.md "Routes"): a route names the parameters it
// takes and their bounds; an unknown or repeated name, a value out of bounds or over 64
// characters is an InvalidArgument naming the parameter. `token` is taken on every route.
import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { type QueryRules, type ReadQuery, readQuery } from "./query.js";

const RULES: QueryRules = {
  minutes: { kind: "int", min: 1, max: 60 },
  kind: { kind: "choice", values: ["placed", "refused", "released"] },
};

const read = (q: string, rules: QueryRules = RULES) => readQuery(new URLSearchParams(q), rules);

/** The error of a read that must fail, checked to be an InvalidArgument about `field`. */
function failure(r: ReadQuery, field: string): KubemootError {
  expect(r.error).toBeInstanceOf(KubemootError);
  expect(KubemootError.is(r.error, ErrorCode.InvalidArgument)).toBe(true);
  expect(r.error!.field).toBe(field);
  expect(r.error!.message).toContain(field);
  expect(r.values).toEqual({});
  expect(r).not.toHaveProperty("token");
  return r.error!;
}

describe("readQuery", () => {
  it("takes the route's parameters within their bounds", () => {
    expect(read("")).toEqual({ values: {} });
    expect(read("minutes=1&kind=placed")).toEqual({ values: { minutes: "1", kind: "placed" } });
    expect(read("minutes=60&kind=released")).toEqual({ values: { minutes: "60", kind: "released" } });
    expect(read("minutes=007")).toEqual({ values: { minutes: "007" } });
  });

  it.each(["0", "61", "-1", "1.5", "1e1", "abc", "", " 5", "0x10"])(
    "refuses minutes=%j, outside a whole number from 1 to 60",
    (v) => {
      const e = failure(read(`minutes=${encodeURIComponent(v)}`), "minutes");
      expect(e.message).toContain("1 to 60");
    },
  );

  it("refuses a choice not among the route's values", () => {
    const e = failure(read("kind=moved"), "kind");
    expect(e.message).toContain("placed, refused, released");
    failure(read("kind=PLACED"), "kind");
    failure(read("kind="), "kind");
  });

  it("refuses a name the route does not take, naming it", () => {
    const e = failure(read("minutes=5&verbose=1"), "verbose");
    expect(e.message).toContain("not a parameter");
    failure(read("minutes=5", {}), "minutes");
    // A long unknown name is named, cut short.
    failure(read(`${"n".repeat(100)}=1`), "n".repeat(32));
  });

  it("refuses a name given twice", () => {
    failure(read("minutes=5&minutes=6"), "minutes");
    failure(read("kind=placed&minutes=5&kind=placed"), "kind");
    failure(read("token=abcdefghijklmnopq&token=abcdefghijklmnopq"), "token");
  });

  it("refuses a value over 64 characters, even one that would be in bounds", () => {
    const long = `${"0".repeat(64)}1`;
    expect(Number(long)).toBe(1);
    const e = failure(read(`minutes=${long}`), "minutes");
    expect(e.message).toContain("64");
    failure(read(`kind=${"x".repeat(65)}`), "kind");
    expect(read(`minutes=${"0".repeat(63)}1`).values).toEqual({ minutes: `${"0".repeat(63)}1` });
  });

  it("takes `token` on any route and returns it apart from the values", () => {
    expect(read("token=s3cr3t-t0ken-value&minutes=5")).toEqual({
      values: { minutes: "5" },
      token: "s3cr3t-t0ken-value",
    });
    expect(read("token=abc%20def", {})).toEqual({ values: {}, token: "abc def" });
    const long = "t".repeat(512);
    expect(read(`token=${long}`, {}).token).toBe(long);
  });

  it("refuses an empty or over-long token", () => {
    failure(read("token=", {}), "token");
    failure(read("token"), "token");
    failure(read(`token=${"t".repeat(513)}`), "token");
  });
});
