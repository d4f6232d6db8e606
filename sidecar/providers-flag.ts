// Parses `--provider NAME=URL[,vram=MiB][,parallel=N][,context=N][,loaded=N][,dcgm=URL]`: providers this
// process probes and publishes itself (the embedded default, and the direct-probe path when
// no operator publishes provider state).
import { ErrorCode, KubemootError } from "../src/errors/index.js";
import type { PublishedProvider } from "../src/publisher/index.js";

const NAME_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function parseProviderFlag(raw: string): PublishedProvider {
  const fail = (msg: string) =>
    new KubemootError(ErrorCode.InvalidConfig, `--provider "${raw}": ${msg}`, { field: "--provider" });
  const eq = raw.indexOf("=");
  if (eq <= 0) throw fail("expected NAME=URL[,vram=MiB][,parallel=N][,context=N][,loaded=N][,dcgm=URL]");
  const name = raw.slice(0, eq);
  if (!NAME_RE.test(name))
    throw fail(`"${name}" is not a valid provider name (lowercase letters, digits, -, .)`);
  const [url, ...opts] = raw.slice(eq + 1).split(",");
  try {
    const u = new URL(url ?? "");
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("scheme");
  } catch {
    throw fail(`"${url}" is not an http(s) URL`);
  }
  const p: PublishedProvider = { name, endpoint: url! };
  for (const opt of opts) {
    const [k, v = ""] = opt.split("=", 2);
    const n = Number(v);
    const int = () => {
      if (!Number.isInteger(n) || n < 0) throw fail(`${k}: expected a whole number ≥ 0, got "${v}"`);
      return n;
    };
    if (k === "vram") p.totalVramMiB = int();
    else if (k === "parallel") p.maxParallel = Math.max(1, int());
    else if (k === "context") p.contextLength = int();
    else if (k === "loaded") p.maxLoadedModels = int();
    else if (k === "dcgm") p.dcgmUrl = v;
    else throw fail(`unknown option "${k}"`);
  }
  return p;
}
