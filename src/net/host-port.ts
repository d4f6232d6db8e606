// Listen addresses given on the command line (--listen, --proxy-listen, --webhook-listen,
// --health-listen): HOST:PORT, the host possibly a bracketed IPv6 address.
import { ErrorCode, KubemootError } from "../errors/index.js";

export function parseHostPort(flag: string, value: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port > 65535) {
    throw new KubemootError(ErrorCode.InvalidConfig, `${flag}: expected HOST:PORT, got "${value}"`, {
      field: flag,
    });
  }
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}
