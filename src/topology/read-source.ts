// A TopologySource read from its manifest: the selector, the levels, and exactly one arm
// (nodeLabels, configMap or webhook) with its durations checked.
import { compileSelector, type LabelSelector, labelKeyError } from "../binding/index.js";
import { describe, type FieldReader, isObject, type Json } from "../manifests/index.js";
import { parseDuration } from "./duration.js";
import { HOSTNAME, MAX_LEVELS, normalizeLevels } from "./levels.js";
import type { SourceArm, TopologySource } from "./types.js";

const CREDENTIALS = ["bearerTokenSecretRef", "basicAuthSecretRef", "clientCertificateSecretRef"];
const DOMAIN_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/$/;

export function readSource(r: FieldReader, doc: Json, name: string): TopologySource | undefined {
  const spec = r.object(doc, "spec", "spec", true);
  if (!spec) return undefined;
  const sel = r.object(spec, "nodeSelector", "spec.nodeSelector", true);
  let nodeSelector: LabelSelector | undefined;
  if (sel) {
    nodeSelector = sel as LabelSelector;
    const compiled = compileSelector(nodeSelector, "spec.nodeSelector");
    if (!compiled.ok) r.fail("spec.nodeSelector", compiled.error);
  }
  const rawLevels = r.list(spec, "levels", "spec.levels");
  const levels: string[] = [];
  if (!rawLevels) r.fail("spec.levels", "required");
  else if (rawLevels.length < 1 || rawLevels.length > MAX_LEVELS) {
    r.fail("spec.levels", `expected 1..${MAX_LEVELS} level keys, got ${rawLevels.length}`);
  }
  for (const [i, l] of (rawLevels ?? []).entries()) {
    const p = `spec.levels[${i}]`;
    if (typeof l !== "string") {
      r.fail(p, `expected a string, got ${describe(l)}`);
      continue;
    }
    if (l === HOSTNAME) {
      r.fail(p, `${HOSTNAME} is implicit and must not be listed`);
      continue;
    }
    const err = labelKeyError(l);
    if (err) {
      r.fail(p, err);
      continue;
    }
    if (levels.includes(l)) {
      r.fail(p, `${l} is listed twice`);
      continue;
    }
    levels.push(l);
  }
  const prefix = r.string(spec, "additionalWritePrefix", "spec.additionalWritePrefix");
  if (prefix !== undefined && !DOMAIN_PREFIX.test(prefix)) {
    r.fail("spec.additionalWritePrefix", `"${prefix}" is not a domain prefix like "example.com/"`);
  }
  const arms = ["nodeLabels", "configMap", "webhook"].filter(
    (k) => spec[k] !== undefined && spec[k] !== null,
  );
  if (arms.length !== 1) {
    r.fail(
      "spec",
      `exactly one of nodeLabels, configMap, webhook is required, got ${arms.length === 0 ? "none" : arms.join(", ")}`,
    );
    return undefined;
  }
  const arm = readArm(r, spec, arms[0]!);
  if (!nodeSelector || !arm || levels.length !== (rawLevels?.length ?? -1)) return undefined;
  return {
    name,
    nodeSelector,
    levels: normalizeLevels(levels),
    ...(prefix !== undefined ? { additionalWritePrefix: prefix } : {}),
    arm,
  };
}

function readArm(r: FieldReader, spec: Json, kind: string): SourceArm | undefined {
  const duration = (o: Json | undefined, key: string, path: string, required: boolean) => {
    const text = r.string(o, key, path, { required });
    if (text === undefined) return undefined;
    const ms = parseDuration(text);
    if (ms === undefined || ms <= 0)
      return r.fail(path, `"${text}" is not a positive duration like 30s or 5m`);
    return { text, ms };
  };
  if (kind === "nodeLabels") {
    r.object(spec, "nodeLabels", "spec.nodeLabels");
    return { kind: "nodeLabels" };
  }
  if (kind === "configMap") {
    const cm = r.object(spec, "configMap", "spec.configMap", true);
    const ref = r.object(cm, "configMapRef", "spec.configMap.configMapRef", true);
    const namespace = r.string(ref, "namespace", "spec.configMap.configMapRef.namespace", { required: true });
    const name = r.string(ref, "name", "spec.configMap.configMapRef.name", { required: true });
    const key = r.string(cm, "key", "spec.configMap.key", { required: true });
    const stale = duration(cm, "maxStaleness", "spec.configMap.maxStaleness", false);
    if (namespace === undefined || name === undefined || key === undefined) return undefined;
    return { kind: "configMap", namespace, name, key, ...(stale ? { maxStaleness: stale.text } : {}) };
  }
  const w = r.object(spec, "webhook", "spec.webhook", true);
  const url = r.string(w, "url", "spec.webhook.url", { required: true });
  if (url !== undefined && !/^https:\/\/[^\s/?#]+/.test(url))
    r.fail("spec.webhook.url", `"${url}" is not an https:// URL`);
  const poll = duration(w, "pollInterval", "spec.webhook.pollInterval", true);
  const timeout = duration(w, "timeout", "spec.webhook.timeout", true);
  const stale = duration(w, "maxStaleness", "spec.webhook.maxStaleness", false);
  if (poll && timeout && timeout.ms > poll.ms) {
    r.fail("spec.webhook.timeout", `${timeout.text} must not exceed pollInterval ${poll.text}`);
  }
  const caBundle = r.string(w, "caBundle", "spec.webhook.caBundle");
  // The credential always comes from a Secret (the operator reads it; see src/operator/topology).
  const credential = r.object(w, "credential", "spec.webhook.credential", true);
  if (credential) {
    const arms = CREDENTIALS.filter((k) => isObject(credential[k]));
    if (arms.length !== 1 || Object.keys(credential).length !== 1) {
      r.fail("spec.webhook.credential", `exactly one of ${CREDENTIALS.join(", ")} is required`);
    }
  }
  if (url === undefined || !poll || !timeout) return undefined;
  return {
    kind: "webhook",
    url,
    pollInterval: poll.text,
    timeout: timeout.text,
    ...(stale ? { maxStaleness: stale.text } : {}),
    ...(caBundle !== undefined ? { caBundle } : {}),
  };
}
