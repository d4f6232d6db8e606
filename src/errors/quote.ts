// Input quoted in error messages: a short, printable prefix. A message travels in a gRPC
// trailer (an HTTP/2 header: a 1 MiB value tears the connection down) and into logs and
// terminals (control characters would rewrite them), so it never carries raw input.

/** Longest part of an input an error message quotes (characters). */
export const MAX_QUOTED_CHARS = 200;

// C0 and C1 controls, DEL, and the Unicode line/paragraph separators and bidi overrides.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** Whether `s` holds a character `printable` would replace. */
export function hasUnprintable(s: string): boolean {
  UNPRINTABLE.lastIndex = 0;
  return UNPRINTABLE.test(s);
}

/** `s` with every control character replaced by "?" (length kept), as src/core's quoteName does. */
export function printable(s: string): string {
  return s.replace(UNPRINTABLE, "?");
}

/**
 * `s` in double quotes, at most `max` printable characters of it, with how much was left out:
 * `"abc…" (1048576 characters)`.
 */
export function quoteInput(s: string, max = MAX_QUOTED_CHARS): string {
  const head = Array.from(s.slice(0, max * 2))
    .slice(0, max)
    .join("");
  const cut = head.length < s.length;
  return `"${printable(head)}${cut ? "…" : ""}"${cut ? ` (${s.length} characters)` : ""}`;
}
