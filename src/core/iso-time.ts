// Fast RFC 3339 parsing for the hot path: provider states and tickets carry timestamps that
// every snapshot index reads, and Date.parse costs close to a microsecond each. The common
// UTC forms ("2026-06-11T00:00:00Z", with optional fraction) are decoded by hand; anything
// else falls back to Date.parse, so the result always equals Date.parse's.

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function digits(s: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

// Days from 1970-01-01 to a civil date (proleptic Gregorian), after H. Hinnant's algorithm.
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Epoch ms of an RFC 3339 / ISO-8601 timestamp; NaN when unparsable (like Date.parse). */
export function parseIsoMs(s: string): number {
  const n = s.length;
  // YYYY-MM-DDTHH:MM:SS[.f+]Z
  if (n >= 20 && s.charCodeAt(n - 1) === 90 /* Z */ && s[4] === "-" && s[7] === "-" && s[10] === "T") {
    const y = digits(s, 0, 4);
    const mo = digits(s, 5, 2);
    const d = digits(s, 8, 2);
    const h = digits(s, 11, 2);
    const mi = digits(s, 14, 2);
    const sec = digits(s, 17, 2);
    if (s[13] === ":" && s[16] === ":" && y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h >= 0) {
      if (h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 59) {
        let ms = 0;
        if (n > 20) {
          if (s[19] !== "." || n === 21) return Date.parse(s);
          const frac = s.slice(20, n - 1);
          const f = digits(frac, 0, Math.min(3, frac.length));
          if (f < 0 || digits(frac, 0, frac.length) < 0) return Date.parse(s);
          ms = f * 10 ** (3 - Math.min(3, frac.length));
        }
        const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
        if (d > (mo === 2 && leap ? 29 : MONTH_DAYS[mo - 1]!)) return Date.parse(s);
        return ((daysFromCivil(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms;
      }
    }
  }
  return Date.parse(s);
}
