// Secrets out of printed text: the user:password@ (or token@) part of URLs such as
// nats://user:secret@host:4222, and `password=…` / `token=…` style pairs. Applied to every
// URL and connection error the code prints (errors, logs, stderr at start).

const REDACTED = "***";

// scheme://userinfo@ — userinfo is anything up to the first @ before the host part.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
// pass=…, password: …, token=…, "secret":"…" (JSON), up to a separator.
const KEY_VALUE =
  /\b((?:pass(?:word)?|passwd|pwd|token|auth_token|secret|api[_-]?key|authorization)["']?\s*[:=]\s*["']?)(?:bearer\s+)?[^\s"',;&}]+/gi;

/** `text` with URL credentials and password/token values replaced by ***. */
export function redactSecrets(text: string): string {
  return text.replace(URL_USERINFO, `$1${REDACTED}@`).replace(KEY_VALUE, `$1${REDACTED}`);
}

/** A URL (or comma-separated URLs) as it may be printed: credentials replaced by ***. */
export function redactUrl(url: string | readonly string[]): string {
  return redactSecrets(typeof url === "string" ? url : url.join(","));
}
