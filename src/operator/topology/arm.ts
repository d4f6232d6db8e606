// The one arm of a TopologySource spec, checked and with its durations in ms. Only the arm is
// read here (nodeSelector and levels belong to the topology model); the first problem throws
// InvalidArgument naming the field, so a bad object is reported, never half-used.

import { parseDuration } from "../../duration/index.js";
import { invalidArgument } from "../../errors/index.js";
import { checkCredential, type WebhookCredential } from "./credential.js";
import { checkWebhookUrl } from "./webhook.js";

export interface NodeLabelsArm {
  kind: "nodeLabels";
}

export interface ConfigMapArm {
  kind: "configMap";
  configMapRef: { namespace: string; name: string };
  key: string;
  maxStalenessMs: number;
}

export interface WebhookArm {
  kind: "webhook";
  /** https only. */
  url: string;
  pollIntervalMs: number;
  /** ≤ pollIntervalMs, so one source never has two reads in flight. */
  timeoutMs: number;
  maxStalenessMs: number;
  caBundle?: string;
  credential: WebhookCredential;
}

export type TopologySourceArm = NodeLabelsArm | ConfigMapArm | WebhookArm;

const ARM_KEYS = ["nodeLabels", "configMap", "webhook"] as const;
const K8S_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]+$/;

/** Reads the arm out of a TopologySource `spec` (parsed YAML/JSON). */
export function parseTopologySourceArm(spec: unknown, path = "spec"): TopologySourceArm {
  const s = asObject(spec, path);
  const given = ARM_KEYS.filter((k) => s[k] !== undefined && s[k] !== null);
  if (given.length !== 1) {
    throw invalidArgument(
      path,
      given.length === 0
        ? `exactly one of ${ARM_KEYS.join(", ")} is required`
        : `exactly one of ${ARM_KEYS.join(", ")} is allowed, got ${given.join(" and ")}`,
    );
  }
  const kind = given[0]!;
  const at = `${path}.${kind}`;
  const body = asObject(s[kind], at);
  if (kind === "nodeLabels") {
    if (Object.keys(body).length > 0) throw invalidArgument(at, "takes no fields (write nodeLabels: {})");
    return { kind };
  }
  if (kind === "configMap") {
    const ref = asObject(body.configMapRef, `${at}.configMapRef`);
    return {
      kind,
      configMapRef: {
        namespace: name(ref.namespace, `${at}.configMapRef.namespace`, K8S_NAME),
        name: name(ref.name, `${at}.configMapRef.name`, K8S_NAME),
      },
      key: name(body.key, `${at}.key`, CONFIGMAP_KEY),
      maxStalenessMs: parseDuration(body.maxStaleness, `${at}.maxStaleness`),
    };
  }
  const url = checkWebhookUrl(body.url, `${at}.url`).href;
  const pollIntervalMs = parseDuration(body.pollInterval, `${at}.pollInterval`);
  const timeoutMs = parseDuration(body.timeout, `${at}.timeout`);
  if (timeoutMs > pollIntervalMs) {
    throw invalidArgument(
      `${at}.timeout`,
      `${body.timeout} is longer than pollInterval ${body.pollInterval}`,
    );
  }
  const maxStalenessMs = parseDuration(body.maxStaleness, `${at}.maxStaleness`);
  const credential = checkCredential(body.credential, `${at}.credential`);
  const arm: WebhookArm = { kind, url, pollIntervalMs, timeoutMs, maxStalenessMs, credential };
  if (body.caBundle !== undefined && body.caBundle !== null) {
    arm.caBundle = pemBundle(body.caBundle, `${at}.caBundle`);
  }
  return arm;
}

const PEM_CERT = "-----BEGIN CERTIFICATE-----";

/** PEM text as is, or base64 of PEM (the `[]byte` convention of Kubernetes caBundle fields). */
function pemBundle(v: unknown, field: string): string {
  if (typeof v === "string" && v.includes(PEM_CERT)) return v;
  if (typeof v === "string") {
    const decoded = Buffer.from(v, "base64").toString("utf8");
    if (decoded.includes(PEM_CERT)) return decoded;
  }
  throw invalidArgument(field, `expected PEM certificates (${PEM_CERT}), as text or base64`);
}

function asObject(v: unknown, field: string): Record<string, unknown> {
  if (v === undefined || v === null) throw invalidArgument(field, "required");
  if (typeof v !== "object" || Array.isArray(v)) throw invalidArgument(field, "expected an object");
  return v as Record<string, unknown>;
}

function name(v: unknown, field: string, pattern: RegExp): string {
  if (typeof v !== "string" || v === "") throw invalidArgument(field, "required");
  if (!pattern.test(v)) throw invalidArgument(field, `"${v}" is not a valid name`);
  return v;
}
