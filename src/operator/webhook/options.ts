// What the injected sidecar looks like: image, ports, probes, resources, drain period and the
// shared settings every sidecar gets (NATS URL, log level, extra env). The chart renders these
// as JSON into a ConfigMap that the operator reads (`--webhook-config FILE`), so a change of
// values rolls out through the operator, not through every agent's manifest.
import { invalidArgument } from "../../errors/index.js";
import { SETTINGS } from "../../settings/index.js";
import { isPlainObject } from "../kube/index.js";

export const SIDECAR_CONTAINER_NAME = "kubemoot-sidecar";
export const INJECT_LABEL = "kubemoot.ai/inject";
/** Why injection did or did not happen, written on every pod the webhook looked at. */
export const STATUS_ANNOTATION = "kubemoot.ai/sidecar-injection";
/** Namespaces the webhook never mutates, whatever their labels (also excluded by the chart). */
export const PROTECTED_NAMESPACES: readonly string[] = ["kube-system", "kube-public", "kube-node-lease"];

export interface EnvVar {
  name: string;
  value: string;
}

export interface ResourceRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface InjectionOptions {
  image: string;
  imagePullPolicy: "Always" | "IfNotPresent" | "Never";
  /** The API port; bound to 127.0.0.1 (only the pod's containers call the scheduler). */
  apiPort: number;
  /**
   * The health-only port (gRPC health, /healthz, /readyz, /metrics), on all interfaces: the
   * kubelet's probes and Prometheus connect to the pod IP. It serves nothing that changes state.
   */
  healthPort: number;
  /** The Ollama/OpenAI proxy port; bound to 127.0.0.1 (only the pod's containers use it). */
  proxyPort: number;
  /** --drain-seconds: the longest wait for in-flight calls at shutdown. */
  drainSeconds: number;
  natsUrl: string;
  /**
   * KUBEMOOT_KEY_LAYOUT of every sidecar: the operator's and the sidecars' keys must agree
   * (the chart renders both from nats.keyLayout).
   */
  keyLayout: KeyLayout;
  logLevel: string;
  resources: ResourceRequirements;
  /** Extra variables for every sidecar (e.g. KUBEMOOT_TICKET_LEASE_SECONDS). */
  extraEnv: EnvVar[];
  /** Run as this user (the image's `node` user is 1000). */
  runAsUser: number;
  /**
   * NODE_OPTIONS of the sidecar: a bounded V8 heap, so that the process stays near what it
   * lives on instead of growing lazily towards the container's limit (bench memory measures
   * the sidecar with exactly these). The old space must survive a burst of large prompts
   * through the proxy: test/sidecar/memory-bound holds the line, and the README's Benchmarks
   * section records the sizes tried.
   * Empty: Node's defaults.
   */
  nodeOptions: string;
  /** MALLOC_ARENA_MAX of the sidecar (glibc's per-thread malloc arenas); 0 leaves glibc's default. */
  mallocArenaMax: number;
  /**
   * NATS credentials and TLS for the sidecars: a Secret that must exist in each agent's
   * namespace, mounted read-only; each key names the file for KUBEMOOT_NATS_CREDS,
   * KUBEMOOT_NATS_TLS_CA, KUBEMOOT_NATS_TLS_CERT and KUBEMOOT_NATS_TLS_KEY. Absent: URL only.
   */
  natsSecret?: NatsSecret;
}

/** The key layouts of the tickets and demand buckets (docs/rules/state.md §2). */
export type KeyLayout = typeof SETTINGS.keyLayout.default;
const KEY_LAYOUTS: readonly KeyLayout[] = ["scoped", "kubemoot"];

export interface NatsSecret {
  name: string;
  credsKey?: string;
  caKey?: string;
  certKey?: string;
  keyKey?: string;
}

/** Where the sidecar finds the NATS Secret's files. */
export const NATS_SECRET_MOUNT = "/etc/kubemoot/nats";
export const NATS_SECRET_VOLUME = "kubemoot-nats";

export const DEFAULT_INJECTION_OPTIONS: InjectionOptions = {
  image: "ghcr.io/kubemoot/kubemoot-scheduler:0.1.0",
  imagePullPolicy: "IfNotPresent",
  apiPort: 50051,
  healthPort: 50052,
  proxyPort: 11434,
  drainSeconds: 20,
  natsUrl: "",
  keyLayout: SETTINGS.keyLayout.default,
  logLevel: SETTINGS.logLevel.default,
  resources: { requests: { cpu: "50m", memory: "96Mi" }, limits: { memory: "256Mi" } },
  extraEnv: [],
  runAsUser: 1000,
  nodeOptions: "--max-old-space-size=80 --max-semi-space-size=1",
  mallocArenaMax: 1,
};

/** The process environment the injected sidecar runs with (extraEnv can override each). */
export function sidecarRuntimeEnv(o: Pick<InjectionOptions, "nodeOptions" | "mallocArenaMax">): EnvVar[] {
  const out: EnvVar[] = [];
  if (o.nodeOptions !== "") out.push({ name: "NODE_OPTIONS", value: o.nodeOptions });
  if (o.mallocArenaMax > 0) out.push({ name: "MALLOC_ARENA_MAX", value: String(o.mallocArenaMax) });
  return out;
}

const PULL_POLICIES = ["Always", "IfNotPresent", "Never"] as const;

function port(v: unknown, field: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 65535) {
    throw invalidArgument(field, `expected a port number (1-65535), got ${JSON.stringify(v)}`);
  }
  return v;
}

function wholeNumber(v: unknown, field: string, min: number, expected: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) throw invalidArgument(field, expected);
  return v;
}

function str(v: unknown, field: string): string {
  if (typeof v !== "string") throw invalidArgument(field, `expected a string, got ${JSON.stringify(v)}`);
  return v;
}

function quantities(v: unknown, field: string): Record<string, string> {
  if (!isPlainObject(v)) throw invalidArgument(field, "expected a map of resource quantities");
  const out: Record<string, string> = {};
  for (const [k, q] of Object.entries(v)) {
    if (typeof q !== "string" && typeof q !== "number") {
      throw invalidArgument(`${field}.${k}`, "expected a quantity such as 100m or 128Mi");
    }
    out[k] = String(q);
  }
  return out;
}

/** Options from the chart's JSON (every key optional; unknown keys are an error, to catch typos). */
export function parseInjectionOptions(raw: unknown, source = "webhook config"): InjectionOptions {
  if (!isPlainObject(raw)) throw invalidArgument(source, "expected a JSON object");
  const o: InjectionOptions = { ...DEFAULT_INJECTION_OPTIONS };
  for (const [k, v] of Object.entries(raw)) {
    const field = `${source}: ${k}`;
    switch (k) {
      case "image":
        o.image = str(v, field);
        if (o.image === "") throw invalidArgument(field, "must not be empty");
        break;
      case "imagePullPolicy":
        if (!PULL_POLICIES.includes(v as (typeof PULL_POLICIES)[number])) {
          throw invalidArgument(field, `expected one of ${PULL_POLICIES.join(", ")}`);
        }
        o.imagePullPolicy = v as InjectionOptions["imagePullPolicy"];
        break;
      case "apiPort":
        o.apiPort = port(v, field);
        break;
      case "healthPort":
        o.healthPort = port(v, field);
        break;
      case "proxyPort":
        o.proxyPort = port(v, field);
        break;
      case "drainSeconds":
        o.drainSeconds = wholeNumber(v, field, 0, "expected a whole number of seconds ≥ 0");
        break;
      case "natsUrl":
        o.natsUrl = str(v, field);
        break;
      case "keyLayout":
        if (!KEY_LAYOUTS.includes(v as KeyLayout)) {
          throw invalidArgument(field, `expected one of ${KEY_LAYOUTS.join(", ")}, got ${JSON.stringify(v)}`);
        }
        o.keyLayout = v as KeyLayout;
        break;
      case "logLevel":
        o.logLevel = str(v, field);
        break;
      case "runAsUser":
        o.runAsUser = wholeNumber(v, field, 1, "expected a non-root user id (≥ 1)");
        break;
      case "nodeOptions":
        o.nodeOptions = str(v, field);
        if (o.nodeOptions.trim() !== "" && !o.nodeOptions.trim().startsWith("--")) {
          throw invalidArgument(field, "expected Node.js options such as --max-old-space-size=80");
        }
        break;
      case "mallocArenaMax":
        o.mallocArenaMax = wholeNumber(v, field, 0, "expected a whole number ≥ 0 (0 = glibc's default)");
        break;
      case "resources": {
        if (!isPlainObject(v)) throw invalidArgument(field, "expected {requests, limits}");
        const r: ResourceRequirements = {};
        if (v.requests !== undefined) r.requests = quantities(v.requests, `${field}.requests`);
        if (v.limits !== undefined) r.limits = quantities(v.limits, `${field}.limits`);
        o.resources = r;
        break;
      }
      case "extraEnv":
        if (!Array.isArray(v)) throw invalidArgument(field, "expected a list of {name, value}");
        o.extraEnv = v.map((e, i) => {
          if (!isPlainObject(e) || typeof e.name !== "string" || e.name === "") {
            throw invalidArgument(`${field}[${i}]`, "expected {name, value}");
          }
          return { name: e.name, value: str(e.value ?? "", `${field}[${i}].value`) };
        });
        break;
      case "natsSecret": {
        if (v === null) break;
        if (!isPlainObject(v))
          throw invalidArgument(field, "expected {name, credsKey, caKey, certKey, keyKey}");
        const secret: NatsSecret = { name: str(v.name, `${field}.name`) };
        if (secret.name === "") break; // the chart renders an empty name when unset
        for (const key of ["credsKey", "caKey", "certKey", "keyKey"] as const) {
          if (v[key] === undefined || v[key] === "") continue;
          secret[key] = str(v[key], `${field}.${key}`);
        }
        for (const k of Object.keys(v)) {
          if (!["name", "credsKey", "caKey", "certKey", "keyKey"].includes(k)) {
            throw invalidArgument(`${field}.${k}`, "unknown setting");
          }
        }
        if ((secret.certKey === undefined) !== (secret.keyKey === undefined)) {
          throw invalidArgument(field, "certKey and keyKey go together (mutual TLS)");
        }
        if (!secret.credsKey && !secret.caKey && !secret.certKey) {
          throw invalidArgument(field, "name at least one of credsKey, caKey, certKey");
        }
        o.natsSecret = secret;
        break;
      }
      default:
        throw invalidArgument(field, "unknown setting");
    }
  }
  if (o.apiPort === o.proxyPort) throw invalidArgument(`${source}: proxyPort`, "must differ from apiPort");
  if (o.healthPort === o.apiPort || o.healthPort === o.proxyPort) {
    throw invalidArgument(`${source}: healthPort`, "must differ from apiPort and proxyPort");
  }
  return o;
}
