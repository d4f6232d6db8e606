// Offline validation of rendered objects:
// - built-in kinds against Kubernetes' own OpenAPI schemas (kubernetes-models' validators);
// - our custom resources against the openAPIV3Schema of the CRD under chart/crds/ that defines
//   them (whatever files are there), with ajv, plus a check for fields the schema does not
//   declare (the API server would prune them silently: in a chart that is always a typo);
// - cert-manager's kinds, for which no schema is installed, by their required fields.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { CHART_DIR, type K8sObject } from "./render.js";

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  [k: string]: unknown;
};

export interface CrdInfo {
  file: string;
  kind: string;
  group: string;
  scope: "Namespaced" | "Cluster";
  versions: Map<string, Schema>;
}

export function loadCrds(dir = join(CHART_DIR, "crds")): Map<string, CrdInfo> {
  const out = new Map<string, CrdInfo>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"))) {
    const crd = parse(readFileSync(join(dir, file), "utf8")) as {
      spec: {
        group: string;
        scope: "Namespaced" | "Cluster";
        names: { kind: string };
        versions: { name: string; schema: { openAPIV3Schema: Schema } }[];
      };
    };
    const versions = new Map(crd.spec.versions.map((v) => [v.name, v.schema.openAPIV3Schema]));
    out.set(`${crd.spec.group}/${crd.spec.names.kind}`, {
      file,
      kind: crd.spec.names.kind,
      group: crd.spec.group,
      scope: crd.spec.scope,
      versions,
    });
  }
  return out;
}

function newAjv(): Ajv {
  // Kubernetes' vocabulary (x-kubernetes-*, nullable) is not JSON Schema: not strict.
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const f of ["int32", "int64", "float", "double", "byte", "quantity"]) ajv.addFormat(f, true);
  return ajv;
}

/** Paths of fields the schema does not declare (where it declares its fields). */
export function unknownFields(schema: Schema, value: unknown, path = ""): string[] {
  if (schema["x-kubernetes-preserve-unknown-fields"]) return [];
  if (Array.isArray(value)) {
    return schema.items ? value.flatMap((v, i) => unknownFields(schema.items!, v, `${path}[${i}]`)) : [];
  }
  if (value === null || typeof value !== "object") return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    const sub = schema.properties?.[k];
    if (sub) out.push(...unknownFields(sub, v, `${path}.${k}`));
    else if (typeof schema.additionalProperties === "object") {
      out.push(...unknownFields(schema.additionalProperties, v, `${path}.${k}`));
    } else if (schema.properties && schema.additionalProperties !== true) out.push(`${path}.${k}`);
  }
  return out;
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf("/");
  return i < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

function certManagerErrors(o: K8sObject): string[] {
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  const errors: string[] = [];
  if (o.kind === "Certificate") {
    if (typeof spec.secretName !== "string" || spec.secretName === "")
      errors.push("spec.secretName: required");
    const ref = spec.issuerRef as { name?: unknown } | undefined;
    if (typeof ref?.name !== "string" || ref.name === "") errors.push("spec.issuerRef.name: required");
    if (!Array.isArray(spec.dnsNames) || spec.dnsNames.length === 0) errors.push("spec.dnsNames: required");
  } else if (o.kind === "Issuer" || o.kind === "ClusterIssuer") {
    const kinds = ["selfSigned", "ca", "acme", "vault", "venafi"].filter((k) => spec[k] !== undefined);
    if (kinds.length !== 1) errors.push(`spec: exactly one issuer type expected, got ${kinds.length}`);
  } else errors.push(`no validation for cert-manager kind ${o.kind}`);
  return errors;
}

export class ObjectValidator {
  private readonly ajv = newAjv();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly crds: Map<string, CrdInfo> = loadCrds()) {}

  /** Errors of one object, each prefixed with `Kind/name`; empty when valid. */
  async validate(o: K8sObject): Promise<string[]> {
    const id = `${o?.kind ?? "?"}/${o?.metadata?.name ?? "?"}`;
    const errors = await this.errors(o);
    return errors.map((e) => `${id}: ${e}`);
  }

  private async errors(o: K8sObject): Promise<string[]> {
    if (typeof o?.apiVersion !== "string" || typeof o.kind !== "string")
      return ["apiVersion and kind required"];
    if (typeof o.metadata?.name !== "string" || o.metadata.name === "") return ["metadata.name required"];
    const { group, version } = splitApiVersion(o.apiVersion);
    const crd = this.crds.get(`${group}/${o.kind}`);
    if (crd) return this.customErrors(crd, version, o);
    if (group === "cert-manager.io") return certManagerErrors(o);
    return this.builtinErrors(group, version, o);
  }

  private customErrors(crd: CrdInfo, version: string, o: K8sObject): string[] {
    const schema = crd.versions.get(version);
    if (!schema) return [`${crd.file} serves no version ${version}`];
    const key = `${crd.group}/${version}/${crd.kind}`;
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(schema);
      this.compiled.set(key, fn);
    }
    const errors = fn(o)
      ? []
      : (fn.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? "invalid"}`);
    errors.push(...unknownFields(schema, o).map((p) => `${p}: not in the CRD schema (${crd.file})`));
    const ns = o.metadata.namespace;
    if (crd.scope === "Namespaced" && !ns) errors.push("metadata.namespace: a namespaced kind needs one");
    if (crd.scope === "Cluster" && ns) errors.push("metadata.namespace: set on a cluster-scoped kind");
    return errors;
  }

  private async builtinErrors(group: string, version: string, o: K8sObject): Promise<string[]> {
    const spec =
      group === ""
        ? `kubernetes-models/${version}/${o.kind}`
        : `kubernetes-models/${group}/${version}/${o.kind}`;
    let Model: new (data: unknown) => { validate(): void };
    try {
      const mod = (await import(spec)) as Record<string, unknown>;
      Model = mod[o.kind] as typeof Model;
      if (typeof Model !== "function") throw new Error("no class");
    } catch {
      return [`no Kubernetes schema for ${o.apiVersion} ${o.kind}`];
    }
    try {
      new Model(o).validate();
      return [];
    } catch (err) {
      return [err instanceof Error ? err.message : String(err)];
    }
  }
}
