// The web view and the decision records it shows (docs/web-view.md): where the view listens,
// the bearer token it asks for, where a call's trace id links to, and how many decision records
// a sidecar publishes.
import { defineSetting, defineText, invalidSetting, parseNumber } from "./setting.js";

/** Where a trace link template takes the call's trace id (src/web/trace-link.ts substitutes it). */
const TRACE_ID_SLOT = "{traceId}";
/** The longest trace link template taken (characters). */
const MAX_TRACE_URL = 2048;

/** A trace link template: "" (none), or an http(s) URL with {traceId} in it. */
function parseTraceUrl(raw: string, source: string): string {
  const t = raw.trim();
  if (t === "") return "";
  if (t.length > MAX_TRACE_URL) throw invalidSetting(source, `over ${MAX_TRACE_URL} characters`);
  if (!t.includes(TRACE_ID_SLOT)) {
    throw invalidSetting(source, `expected a URL with ${TRACE_ID_SLOT} where the trace id goes, got "${t}"`);
  }
  // As a browser will read it once a trace id (32 hex digits) stands in the slot.
  const sample = t.replaceAll(TRACE_ID_SLOT, "0".repeat(32));
  if (!URL.canParse(sample) || !["http:", "https:"].includes(new URL(sample).protocol)) {
    throw invalidSetting(source, `expected an http:// or https:// URL, got "${t}"`);
  }
  return t;
}

export const WEB_SETTINGS = {
  webListen: defineText({
    name: "KUBEMOOT_WEB_LISTEN",
    type: "address",
    defaultFor: { demo: "127.0.0.1:0" },
    help: "the read-only web view's address (empty: none; port 0: any free port); keep it on 127.0.0.1 unless a token or an authenticating proxy guards it",
    readBy: ["operator", "standalone", "demo"],
    flag: "web-listen",
    placeholder: "HOST:PORT",
  }),
  webTokenFile: defineSetting<string | undefined>({
    name: "KUBEMOOT_WEB_TOKEN_FILE",
    type: "file",
    default: undefined,
    help: "a file holding the web view's bearer token (none: no token asked); browsers pass it once as ?token=, then by cookie",
    readBy: ["operator", "standalone", "demo"],
    flag: "web-token-file",
    placeholder: "FILE",
    parseValue: (raw) => raw.trim() || undefined,
  }),
  webTraceUrl: defineSetting<string>({
    name: "KUBEMOOT_WEB_TRACE_URL",
    type: "url",
    default: "",
    help: "the web view's link for a call's trace: an http(s) URL with {traceId} where the W3C trace id goes, e.g. https://jaeger.example/trace/{traceId} (empty: the id is shown as text)",
    readBy: ["operator", "standalone", "demo"],
    flag: "web-trace-url",
    placeholder: "URL",
    parseValue: parseTraceUrl,
  }),
  decisionRecordsPerS: defineSetting<number>({
    name: "KUBEMOOT_DECISION_RECORDS_PER_SECOND",
    type: "number",
    default: 20,
    help: "decision records a sidecar publishes per second at most, for the web view (0: none); beyond it they are sampled and weighted",
    readBy: ["sidecar", "standalone"],
    parseValue: (raw, source) => parseNumber(raw, source, 0),
  }),
} as const;
