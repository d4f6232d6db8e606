// Which provider endpoints a sidecar may send prompts and unloads to (KUBEMOOT_PROVIDER_ENDPOINTS):
// `host[:port]` patterns and CIDRs, matched against an endpoint URL's host and port. Pure: no DNS
// (a CIDR matches only IP-literal hosts), so a check costs microseconds in the hot path.
import { BlockList, isIP } from "node:net";
import { ErrorCode, KubemootError } from "../errors/index.js";

export interface EndpointAllowlist {
  /** The entries as given (trimmed); empty = every endpoint is allowed. */
  readonly patterns: readonly string[];
  /** Whether `endpoint` (an http(s) URL) is allowed; always true for an empty list. */
  allows(endpoint: string): boolean;
}

/** Host and port an endpoint URL connects to: lowercase host, no brackets or trailing dot. */
export function endpointHostPort(endpoint: string): { host: string; port: number } | undefined {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  const host = u.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (host === "") return undefined;
  return { host, port: u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80 };
}

type Matcher = (host: string, port: number) => boolean;

/** `*` as a whole leftmost label: one or more labels; elsewhere: any run within one label. */
function hostRegex(pattern: string): RegExp {
  const labels = pattern.split(".");
  const parts = labels.map((label, i) => {
    if (label === "*") return i === 0 ? "[^.]+(?:\\.[^.]+)*" : "[^.]+";
    return label
      .split("*")
      .map((s) => s.replace(/[.+?^${}()|[\]\\-]/g, "\\$&"))
      .join("[^.]*");
  });
  return new RegExp(`^${parts.join("\\.")}$`);
}

/** A literal IPv6 address in its canonical (WHATWG URL) form, as endpoint hosts are. */
function canonicalV6(addr: string): string {
  return new URL(`http://[${addr}]/`).hostname.replace(/^\[|\]$/g, "");
}

const LABEL_RE = /^[a-z0-9_*]([a-z0-9_*-]*[a-z0-9_*])?$/;

function parseEntry(entry: string, fail: (why: string) => KubemootError): Matcher {
  if (entry.includes("://") || entry.includes("@")) throw fail("expected host[:port] or a CIDR, not a URL");
  const slash = entry.indexOf("/");
  if (slash >= 0) {
    const addr = entry.slice(0, slash).replace(/^\[|\]$/g, "");
    const bits = entry.slice(slash + 1);
    const family = isIP(addr);
    const max = family === 4 ? 32 : 128;
    if (family === 0) throw fail("a CIDR needs an IP address before the /");
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) throw fail(`prefix length must be 0-${max}`);
    const list = new BlockList();
    list.addSubnet(addr, Number(bits), family === 4 ? "ipv4" : "ipv6");
    return (host) => {
      const f = isIP(host);
      return f !== 0 && list.check(host, f === 4 ? "ipv4" : "ipv6");
    };
  }
  let host: string;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(.*))?$/.exec(entry);
  if (bracket) {
    host = bracket[1]!;
    portText = bracket[2];
    if (isIP(host) !== 6) throw fail("brackets hold an IPv6 address");
  } else if (isIP(entry) === 6) {
    host = entry;
  } else {
    const parts = entry.split(":");
    if (parts.length > 2) throw fail("an IPv6 address with a port goes in brackets, e.g. [fd00::1]:11434");
    host = parts[0]!;
    portText = parts[1];
  }
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) throw fail("port must be 1-65535");
  }
  const portOk = (p: number) => port === undefined || p === port;
  if (isIP(host) === 4) return (h, p) => h === host && portOk(p);
  if (isIP(host) === 6) {
    const want = canonicalV6(host);
    return (h, p) => h === want && portOk(p);
  }
  if (host === "*") return (_h, p) => portOk(p);
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "" || !name.split(".").every((l) => LABEL_RE.test(l))) {
    throw fail("expected a host name (letters, digits, -, _, * as a wildcard), an IP address or a CIDR");
  }
  if (/^[\d.*]+$/.test(name)) throw fail("use a CIDR (e.g. 10.0.0.0/8) for a range of addresses");
  const re = hostRegex(name);
  // A name pattern never matches an IP literal: addresses are allowed by CIDR or exact IP only.
  return (h, p) => isIP(h) === 0 && re.test(h) && portOk(p);
}

/** At most 200 characters of an entry, control characters escaped (JSON). */
function quote(entry: string): string {
  return JSON.stringify(entry.length > 200 ? `${entry.slice(0, 200)}…` : entry);
}

/**
 * Parses a comma-separated list; throws InvalidConfig naming `field` and the bad entry. Empty
 * items (a trailing comma) are ignored; an empty list allows every endpoint.
 */
export function parseEndpointAllowlist(raw: string, field: string): EndpointAllowlist {
  const patterns = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const matchers = patterns.map((entry) =>
    parseEntry(
      entry,
      (why) =>
        new KubemootError(ErrorCode.InvalidConfig, `${field}: entry ${quote(entry)}: ${why}`, { field }),
    ),
  );
  return {
    patterns,
    allows(endpoint) {
      if (matchers.length === 0) return true;
      const hp = endpointHostPort(endpoint);
      return hp !== undefined && matchers.some((m) => m(hp.host, hp.port));
    },
  };
}

/** The list that allows every endpoint (no KUBEMOOT_PROVIDER_ENDPOINTS). */
export const ALLOW_ALL_ENDPOINTS: EndpointAllowlist = parseEndpointAllowlist("", "");
