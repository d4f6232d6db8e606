// The web view's optional bearer token (docs/web-view.md "Security"): without a token every
// request is let in; with one, a request shows it by `Authorization: Bearer`, the `kubemoot_web`
// cookie or the `token` query parameter. A guessable token is refused at start.
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { SETTINGS } from "../settings/index.js";
import { AUTH_COOKIE, MIN_TOKEN_LENGTH, webAuth } from "./auth.js";

const TOKEN = "k8s-view+token/0123=ab%";
const req = (headers: Record<string, string> = {}) => ({ headers }) as IncomingMessage;

describe("webAuth", () => {
  it("lets every request in without a token", () => {
    const auth = webAuth(undefined);
    expect(auth.check(req(), undefined)).toBe("open");
    expect(auth.check(req({ authorization: "Bearer whatever-at-all-123" }), "x")).toBe("open");
  });

  it("answers missing when a request shows no token", () => {
    const auth = webAuth(TOKEN);
    expect(auth.check(req(), undefined)).toBe("missing");
    expect(auth.check(req({ cookie: "theme=dark; lang=en" }), undefined)).toBe("missing");
    expect(auth.check(req({ authorization: `Basic ${btoa(`u:${TOKEN}`)}` }), undefined)).toBe("missing");
  });

  it("lets in the right token by header, cookie or query parameter", () => {
    const auth = webAuth(TOKEN);
    expect(auth.check(req({ authorization: `Bearer ${TOKEN}` }), undefined)).toBe("ok");
    expect(auth.check(req({ authorization: `bearer ${TOKEN}` }), undefined)).toBe("ok");
    expect(
      auth.check(req({ cookie: `theme=dark; ${AUTH_COOKIE}=${encodeURIComponent(TOKEN)}; x=1` }), undefined),
    ).toBe("ok");
    expect(auth.check(req(), TOKEN)).toBe("ok");
    const named = (n: string) => `${n}=${encodeURIComponent(TOKEN)}`;
    expect(auth.check(req({ cookie: `${AUTH_COOKIE}_old=x; ${named(AUTH_COOKIE)}` }), undefined)).toBe("ok");
    // Only the cookie of that exact name counts.
    expect(auth.check(req({ cookie: named(`x${AUTH_COOKIE}`) }), undefined)).toBe("missing");
  });

  it("answers bad for a wrong token, wherever it is shown", () => {
    const auth = webAuth(TOKEN);
    const wrong = `${TOKEN}x`;
    expect(auth.check(req({ authorization: `Bearer ${wrong}` }), undefined)).toBe("bad");
    expect(auth.check(req({ cookie: `${AUTH_COOKIE}=${encodeURIComponent(wrong)}` }), undefined)).toBe("bad");
    // The cookie holds the token URL-encoded: its raw form is not the token.
    expect(auth.check(req({ cookie: `${AUTH_COOKIE}=k8s-view%2Btoken` }), undefined)).toBe("bad");
    expect(auth.check(req({ cookie: `${AUTH_COOKIE}=%E0%A4%A` }), "nope")).toBe("bad");
    expect(auth.check(req(), TOKEN.slice(0, -1))).toBe("bad");
    expect(auth.check(req(), "")).toBe("bad");
    expect(webAuth("another-token-of-16+").check(req({ authorization: `Bearer ${TOKEN}` }), undefined)).toBe(
      "bad",
    );
  });

  it("refuses a short token or one with spaces at start", () => {
    expect(MIN_TOKEN_LENGTH).toBe(16);
    expect(() => webAuth("a".repeat(16))).not.toThrow();
    for (const bad of ["a".repeat(15), "", "0123456789 abcdef", "0123456789abcdef\n", "\t0123456789abcdef"]) {
      let err: unknown;
      try {
        webAuth(bad);
      } catch (e) {
        err = e;
      }
      expect(KubemootError.is(err, ErrorCode.InvalidConfig)).toBe(true);
      expect((err as KubemootError).field).toBe(SETTINGS.webTokenFile.name);
      expect((err as KubemootError).message).not.toContain(bad.trim() || "\u0000");
    }
  });

  it("sets an HttpOnly, SameSite=Strict cookie for the whole site", () => {
    const c = webAuth(TOKEN).cookie(TOKEN);
    const [pair, ...attrs] = c.split("; ");
    expect(pair).toBe(`${AUTH_COOKIE}=${encodeURIComponent(TOKEN)}`);
    expect(attrs).toEqual(expect.arrayContaining(["HttpOnly", "SameSite=Strict", "Path=/"]));
    // What the cookie sets, a later request shows: it lets that browser in.
    expect(webAuth(TOKEN).check(req({ cookie: pair! }), undefined)).toBe("ok");
  });
});
