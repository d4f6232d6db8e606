// Builds the web view's page (docs/web-view.md) from web/ into dist/web, which the view server serves.
// Relative base and no inline code: the page may sit behind a path prefix and runs under a strict CSP.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  base: "./",
  publicDir: false,
  // Vite 8 transforms TSX with Oxc; Preact's automatic runtime, no plugin to download.
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    // Every asset is a file of its own: the CSP allows data: for images only, not for fonts or styles.
    assetsInlineLimit: 0,
    // The polyfill is an inline script, which script-src 'self' would refuse.
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
  },
});
