// The page's files (docs/web-view.md "Assets"): built by Vite into dist/web at `npm run build`,
// read once at start and served from memory with their content types. Hashed files under
// assets/ never change, so browsers keep them for a year; index.html is checked every time.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../repo-root.js";

export interface Asset {
  body: Buffer;
  type: string;
  cacheControl: string;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json; charset=utf-8",
};

/** The largest folder of assets read (bytes): the page is small; anything bigger is a mistake. */
const MAX_TOTAL_BYTES = 8 * 1024 * 1024;

/** Where the built page lives. */
export function webAssetsDir(): string {
  return path.join(repoRoot(), "dist", "web");
}

/** URL path ("/", "/assets/x.js") → file; empty when the page was not built. */
export function loadAssets(dir = webAssetsDir()): Map<string, Asset> {
  const out = new Map<string, Asset>();
  if (!existsSync(path.join(dir, "index.html"))) return out;
  let total = 0;
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        walk(child);
        continue;
      }
      const type = TYPES[path.extname(e.name)];
      if (type === undefined) continue;
      total += statSync(path.join(dir, child)).size;
      if (total > MAX_TOTAL_BYTES) throw new Error(`web assets in ${dir} exceed ${MAX_TOTAL_BYTES} bytes`);
      out.set(`/${child}`, {
        body: readFileSync(path.join(dir, child)),
        type,
        cacheControl: child.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-cache",
      });
    }
  };
  walk("");
  const index = out.get("/index.html");
  if (index !== undefined) out.set("/", index);
  return out;
}
