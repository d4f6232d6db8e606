// The web view (docs/web-view.md): its server, and the decision records sidecars publish for it.
export { decisionHooks } from "./decision-publisher.js";
export { startWebView, type WebView } from "./server.js";
