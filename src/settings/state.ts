// Where shared state lives (docs/rules/state.md, docs/deploy.md "NATS credentials"): the
// backend, the NATS servers, their credentials and TLS files, and the buckets' replicas. That
// each file exists is checked where it is opened (src/cli/state-flags.ts).
import { type CommandName, defineSetting, defineText, parseChoice, type Setting } from "./setting.js";

const NATS_READERS: readonly CommandName[] = ["sidecar", "operator"];

function fileSetting(name: string, help: string): Setting<string | undefined> {
  return defineSetting<string | undefined>({
    name,
    type: "file",
    default: undefined,
    help,
    readBy: NATS_READERS,
    writtenBy: ["webhook"],
    parseValue: (raw) => raw.trim() || undefined,
  });
}

export const STATE_SETTINGS = {
  state: defineSetting<"memory" | "nats">({
    name: "KUBEMOOT_STATE",
    type: "choice",
    default: "nats",
    help: "the shared-state backend: nats, or memory (the embedded store, in this process alone)",
    readBy: ["sidecar", "operator"],
    writtenBy: ["webhook"],
    flag: "state",
    placeholder: "memory|nats",
    parseValue: (raw, source) => parseChoice(raw, source, ["memory", "nats"] as const),
  }),
  natsUrl: defineText({
    name: "KUBEMOOT_NATS_URL",
    type: "list",
    help: "NATS server URL(s), comma-separated; standalone without it uses the embedded store",
    readBy: ["sidecar", "operator", "standalone"],
    writtenBy: ["webhook"],
    flag: "nats",
    placeholder: "URL",
  }),
  natsCreds: fileSetting(
    "KUBEMOOT_NATS_CREDS",
    "a NATS credentials file: a bare nkey seed or a .creds file (JWT and seed)",
  ),
  natsTlsCa: fileSetting(
    "KUBEMOOT_NATS_TLS_CA",
    "the CA file that NATS servers' certificates are checked against",
  ),
  natsTlsCert: fileSetting(
    "KUBEMOOT_NATS_TLS_CERT",
    "a client certificate file for mutual TLS to NATS; set together with KUBEMOOT_NATS_TLS_KEY",
  ),
  natsTlsKey: fileSetting(
    "KUBEMOOT_NATS_TLS_KEY",
    "the client certificate's key file; set together with KUBEMOOT_NATS_TLS_CERT",
  ),
  keyLayout: defineSetting<"scoped" | "kubemoot">({
    name: "KUBEMOOT_KEY_LAYOUT",
    type: "choice",
    default: "scoped",
    help:
      "the key layout of the tickets and demand buckets: scoped (provider and namespace as their own " +
      "key tokens, so watches and NATS permissions can narrow to them) or kubemoot (Kubemoot's own " +
      "keys, to share buckets with its runtime; every sidecar then watches every provider)",
    readBy: NATS_READERS,
    writtenBy: ["webhook"],
    parseValue: (raw, source) => parseChoice(raw, source, ["scoped", "kubemoot"] as const),
  }),
  kvReplicas: defineSetting<1 | 3 | 5 | undefined>({
    name: "KUBEMOOT_KV_REPLICAS",
    type: "choice",
    default: undefined,
    defaultText: "1",
    help: "replicas of the KV buckets when they are created (1, 3 or 5)",
    readBy: NATS_READERS,
    parseValue: (raw, source) => parseChoice(raw, source, [1, 3, 5] as const),
  }),
} as const;
