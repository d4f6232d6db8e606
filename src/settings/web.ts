// The web view and the decision records it shows (docs/web-view.md): where the view listens,
// the bearer token it asks for, and how many decision records a sidecar publishes.
import { defineSetting, defineText, parseNumber } from "./setting.js";

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
  decisionRecordsPerS: defineSetting<number>({
    name: "KUBEMOOT_DECISION_RECORDS_PER_SECOND",
    type: "number",
    default: 20,
    help: "decision records a sidecar publishes per second at most, for the web view (0: none); beyond it they are sampled and weighted",
    readBy: ["sidecar", "standalone"],
    parseValue: (raw, source) => parseNumber(raw, source, 0),
  }),
} as const;
