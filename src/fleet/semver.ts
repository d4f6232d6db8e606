// Semantic versions as Kubernetes' CEL `semver()` reads them (semver.org 2.0.0, strict:
// MAJOR.MINOR.PATCH with optional pre-release and build metadata; build metadata does not
// take part in ordering or equality).

export interface Semver {
  readonly major: bigint;
  readonly minor: bigint;
  readonly patch: bigint;
  readonly prerelease: readonly string[];
}

const NUM = "(0|[1-9]\\d*)";
const IDENT = "(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)";
const PATTERN = new RegExp(
  `^${NUM}\\.${NUM}\\.${NUM}(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`,
);

export function parseSemver(text: string): Semver | undefined {
  const m = PATTERN.exec(text);
  if (!m) return undefined;
  return {
    major: BigInt(m[1]!),
    minor: BigInt(m[2]!),
    patch: BigInt(m[3]!),
    prerelease: m[4] ? m[4].split(".") : [],
  };
}

/** -1, 0 or 1 by semver precedence. */
export function compareSemver(a: Semver, b: Semver): number {
  for (const k of ["major", "minor", "patch"] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  // A version without a pre-release ranks above one with.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return Math.sign(b.prerelease.length - a.prerelease.length);
  }
  const n = Math.min(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < n; i++) {
    const x = a.prerelease[i]!;
    const y = b.prerelease[i]!;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return Math.sign(a.prerelease.length - b.prerelease.length);
}

export function canonicalSemver(v: Semver): string {
  const core = `${v.major}.${v.minor}.${v.patch}`;
  return v.prerelease.length ? `${core}-${v.prerelease.join(".")}` : core;
}
