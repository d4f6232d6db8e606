// The optional host allowlist of webhook TopologySources (KUBEMOOT_TOPOLOGY_ALLOWED_HOSTS):
// a source whose URL names another host is refused before its credential is read, so whoever
// may create a TopologySource cannot send the credential to a host of their choosing.
//
//   inventory.example.com        that host, any port
//   inventory.example.com:8443   that host and port (an https URL without a port is 443)
//   *.example.com                any host below example.com (not example.com itself)
import { invalidArgument } from "../../errors/index.js";

const PATTERN = /^(\*\.)?([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:\d{1,5})?$/;

/** Comma-separated patterns; empty → [] (every host allowed). Throws naming `field`. */
export function parseAllowedHosts(text: string, field: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(",")) {
    const p = raw.trim().toLowerCase();
    if (p === "") continue;
    const port = /:(\d+)$/.exec(p)?.[1];
    if (!PATTERN.test(p) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
      throw invalidArgument(field, `"${raw.trim()}" is not a host, *.domain or host:port pattern`);
    }
    out.push(p);
  }
  return out;
}

/** Whether an https URL's host (and port) matches one of the patterns. */
export function hostAllowed(url: string, patterns: readonly string[]): boolean {
  const u = new URL(url);
  const host = u.hostname.toLowerCase();
  const port = u.port || "443";
  return patterns.some((p) => {
    const i = p.lastIndexOf(":");
    const [h, pp] = i > 0 ? [p.slice(0, i), p.slice(i + 1)] : [p, undefined];
    if (pp !== undefined && pp !== port) return false;
    return h.startsWith("*.") ? host.endsWith(h.slice(1)) && host.length > h.length - 1 : host === h;
  });
}
