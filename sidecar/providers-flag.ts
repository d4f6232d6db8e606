// Parses `--provider NAME=URL[,vram=MiB][,parallel=N][,context=N][,loaded=N][,dcgm=URL][,engine=E]`:
// providers this process probes and publishes itself (the embedded default, and the
// direct-probe path when no operator publishes provider state). `engine` is a ModelProvider's
// spec.engine (docs/rules/engines.md), default ollama.
import { DEFAULT_ENGINE, ENGINES, isEngine } from "../src/core/engines.js";
import { ErrorCode, KubemootError } from "../src/errors/index.js";
import type { PublishedProvider } from "../src/publisher/index.js";

export const PROVIDER_FLAG_SYNTAX =
  "NAME=URL[,vram=MiB][,parallel=N][,context=N][,loaded=N][,dcgm=URL][,engine=ollama|vllm|llamacpp|sglang|openai]";

const NAME_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function parseProviderFlag(raw: string): PublishedProvider {
  const fail = (msg: string) =>
    new KubemootError(ErrorCode.InvalidConfig, `--provider "${raw}": ${msg}`, { field: "--provider" });
  const eq = raw.indexOf("=");
  if (eq <= 0) throw fail(`expected ${PROVIDER_FLAG_SYNTAX}`);
  const name = raw.slice(0, eq);
  if (!NAME_RE.test(name))
    throw fail(`"${name}" is not a valid provider name (lowercase letters, digits, -, .)`);
  const [url, ...opts] = raw.slice(eq + 1).split(",");
  try {
    const u = new URL(url ?? "");
    if (u.protocol !== "http:" && u.protocol !== "https:")
      throw new KubemootError(ErrorCode.InvalidConfig, "not http(s)");
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
    else if (k === "engine") {
      if (!isEngine(v)) throw fail(`engine: expected one of ${ENGINES.join(", ")}, got "${v}"`);
      if (v !== DEFAULT_ENGINE) p.engine = v;
    } else throw fail(`unknown option "${k}"`);
  }
  return p;
}
