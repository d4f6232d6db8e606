// The web view (docs/web-view.md): the decision records sidecars publish for it, and its server.
// The server is loaded on first start, so that a sidecar, which only publishes, carries none of
// its code.
import type { WebView, WebViewOptions } from "./server.js";

export { decisionHooks } from "./decision-publisher.js";
export type { WebView } from "./server.js";

/** Starts the web view's server (./server.ts). */
export async function startWebView(o: WebViewOptions): Promise<WebView> {
  const { startWebView: start } = await import("./server.js");
  return start(o);
}
