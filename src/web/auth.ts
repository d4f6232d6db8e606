// The web view's optional bearer token (docs/web-view.md "Security"). A request shows it in an
// `Authorization: Bearer` header (scripts, proxies), or in the `kubemoot_web` cookie that a
// browser gets by opening the page once as `/?token=…`; EventSource cannot send headers, so
// browsers need the cookie. Tokens are compared by their SHA-256 digests in constant time.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { SETTINGS } from "../settings/index.js";

export const AUTH_COOKIE = "kubemoot_web";
/** Shorter tokens are refused at start: they could be guessed. */
export const MIN_TOKEN_LENGTH = 16;

export type AuthVerdict = "open" | "ok" | "missing" | "bad";

export interface WebAuth {
  /** Whether the request carries the token (by header, cookie, or the `token` query parameter). */
  check(req: IncomingMessage, queryToken: string | undefined): AuthVerdict;
  /** The Set-Cookie value that lets this browser in from now on. */
  cookie(token: string): string;
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/** A token check; without a token every request is let in ("open"). */
export function webAuth(token: string | undefined): WebAuth {
  if (token !== undefined && (token.length < MIN_TOKEN_LENGTH || /\s/.test(token))) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `web token: expected at least ${MIN_TOKEN_LENGTH} characters and no spaces`,
      { field: SETTINGS.webTokenFile.name },
    );
  }
  const want = token === undefined ? undefined : digest(token);
  const matches = (given: string) => want !== undefined && timingSafeEqual(digest(given), want);
  return {
    check(req, queryToken) {
      if (want === undefined) return "open";
      const given: string[] = [];
      const auth = req.headers.authorization;
      if (typeof auth === "string" && /^Bearer /i.test(auth)) given.push(auth.slice(7).trim());
      const cookie = cookieValue(req.headers.cookie, AUTH_COOKIE);
      if (cookie !== undefined) given.push(cookie);
      if (queryToken !== undefined) given.push(queryToken);
      if (given.length === 0) return "missing";
      return given.some(matches) ? "ok" : "bad";
    },
    cookie(t) {
      return `${AUTH_COOKIE}=${encodeURIComponent(t)}; HttpOnly; SameSite=Strict; Path=/`;
    },
  };
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined || header.length > 4096) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}
