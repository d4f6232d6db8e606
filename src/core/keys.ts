// KV-safe key tokens (docs/rules/placement.md §8): NATS KV keys allow only a restricted alphabet,
// so model and agent names are escaped reversibly. Letters, digits and '-' pass; any other
// char up to 0xff becomes '_' + 2 hex digits; above 0xff '__' + 4 hex digits; empty → '_'.

export function kvToken(s: string): string {
  if (s.length === 0) return "_";
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (
      (cp >= 0x30 && cp <= 0x39) ||
      (cp >= 0x41 && cp <= 0x5a) ||
      (cp >= 0x61 && cp <= 0x7a) ||
      cp === 0x2d
    ) {
      out += ch;
    } else if (cp <= 0xff) {
      out += `_${cp.toString(16).padStart(2, "0")}`;
    } else {
      // Code points above 0xffff are written as their two UTF-16 units, 4 hex digits each.
      for (let i = 0; i < ch.length; i++) out += `__${ch.charCodeAt(i).toString(16).padStart(4, "0")}`;
    }
  }
  return out;
}

/** kvToken's inverse; undefined for a string kvToken never writes. */
export function kvUntoken(token: string): string | undefined {
  if (token === "_") return "";
  let out = "";
  for (let i = 0; i < token.length; ) {
    const ch = token[i]!;
    if (ch !== "_") {
      if (!/[0-9A-Za-z-]/.test(ch)) return undefined;
      out += ch;
      i++;
      continue;
    }
    const wide = token[i + 1] === "_";
    const hex = wide ? token.slice(i + 2, i + 6) : token.slice(i + 1, i + 3);
    if (hex.length !== (wide ? 4 : 2) || !/^[0-9a-f]+$/.test(hex)) return undefined;
    out += String.fromCharCode(Number.parseInt(hex, 16));
    i += wide ? 6 : 3;
  }
  return out;
}
