// Sidecar injection as a pure function: a Pod (as the API server sends it for admission) and
// its Agent's binding in, an RFC 6902 patch and the reasons out.
//
// What a labelled pod gets: the sidecar as a native sidecar (the first init container, with
// `restartPolicy: Always`: it starts before the agent containers and is stopped after them,
// so calls in flight at shutdown still have their scheduler), gRPC health probes on its
// health-only port (the API and the proxy listen on 127.0.0.1 only), the agent's
// KUBEMOOT_* env from its binding, and OLLAMA_HOST on the agent containers pointing at the
// sidecar's local proxy. Every pod the function looked at gets an annotation saying what
// happened and why, so `kubectl describe pod` answers "why no sidecar?".
//
// Never a change to the spec when: the pod is not labelled, it is in a protected namespace
// (kube-system, ...), it already has the sidecar (injection is idempotent: the patched pod
// yields no patch), it names no Agent, or its Agent has no binding yet (the pod would start
// without a model; better to leave it as written and say why).
import { CREW_LABEL } from "../../binding/index.js";
import { SETTINGS } from "../../settings/index.js";
import {
  AGENT_LABEL,
  ENV_CONTAINERS_ANNOTATION,
  isPlainObject,
  type JsonPatchOp,
  jsonEqual,
} from "../kube/index.js";
import {
  type EnvVar,
  INJECT_LABEL,
  type InjectionOptions,
  NATS_SECRET_MOUNT,
  NATS_SECRET_VOLUME,
  PROTECTED_NAMESPACES,
  SIDECAR_CONTAINER_NAME,
  STATUS_ANNOTATION,
  sidecarRuntimeEnv,
} from "./options.js";

/** What the webhook needs of an Agent's binding (the reconciler's AgentResult fits). */
export interface AgentInjectionBinding {
  namespace: string;
  name: string;
  /** KUBEMOOT_MODEL_*, KUBEMOOT_TRIAGE_*, the candidate lists. */
  env: Readonly<Record<string, string>>;
}

export interface InjectionResult {
  /** Empty when nothing changes. */
  patch: JsonPatchOp[];
  /** True when the patch adds the sidecar. */
  injected: boolean;
  /** Why, in words (also the status annotation's value). */
  reasons: string[];
}

/** A Pod as JSON; only the fields injection reads are typed. */
export interface PodLike {
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: {
    containers?: unknown[];
    initContainers?: unknown[];
    terminationGracePeriodSeconds?: number;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/** Margin of the pod's grace period over the sidecar's drain: the agent stops first. */
export const GRACE_MARGIN_SECONDS = 10;

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
export function pointerToken(s: string): string {
  return s.replaceAll("~", "~0").replaceAll("/", "~1");
}

export function ollamaHost(o: InjectionOptions): string {
  return `http://127.0.0.1:${o.proxyPort}`;
}

/** The sidecar container (the same object the no-webhook docs write into a pod template). */
export function sidecarContainer(
  agent: { namespace: string; name: string; crew?: string },
  env: Readonly<Record<string, string>>,
  o: InjectionOptions,
): Record<string, unknown> {
  const vars: EnvVar[] = [
    { name: SETTINGS.namespace.name, value: agent.namespace },
    { name: SETTINGS.agentName.name, value: agent.name },
  ];
  if (agent.crew) vars.push({ name: SETTINGS.crew.name, value: agent.crew });
  if (o.natsUrl) vars.push({ name: SETTINGS.natsUrl.name, value: o.natsUrl });
  const ns = o.natsSecret;
  if (ns) {
    const file = (k: string | undefined) => `${NATS_SECRET_MOUNT}/${k}`;
    if (ns.credsKey) vars.push({ name: SETTINGS.natsCreds.name, value: file(ns.credsKey) });
    if (ns.caKey) vars.push({ name: SETTINGS.natsTlsCa.name, value: file(ns.caKey) });
    if (ns.certKey) vars.push({ name: SETTINGS.natsTlsCert.name, value: file(ns.certKey) });
    if (ns.keyKey) vars.push({ name: SETTINGS.natsTlsKey.name, value: file(ns.keyKey) });
  }
  vars.push(
    { name: SETTINGS.state.name, value: "nats" },
    // Always written, the default too: the operator's layout is the chart's, not the image's.
    { name: SETTINGS.keyLayout.name, value: o.keyLayout },
    { name: SETTINGS.logLevel.name, value: o.logLevel },
  );
  for (const name of Object.keys(env).sort()) vars.push({ name, value: env[name]! });
  const seen = new Set(vars.map((v) => v.name));
  for (const v of o.extraEnv) if (!seen.has(v.name)) vars.push(v);
  // After extraEnv, so that an operator's own NODE_OPTIONS or MALLOC_ARENA_MAX wins.
  const named = new Set(vars.map((v) => v.name));
  for (const v of sidecarRuntimeEnv(o)) if (!named.has(v.name)) vars.push(v);
  const grpc = (service: string) => ({ grpc: { port: o.healthPort, service } });
  return {
    name: SIDECAR_CONTAINER_NAME,
    image: o.image,
    imagePullPolicy: o.imagePullPolicy,
    restartPolicy: "Always",
    args: [
      "sidecar",
      "--listen",
      `127.0.0.1:${o.apiPort}`,
      "--health-listen",
      `0.0.0.0:${o.healthPort}`,
      "--proxy-listen",
      `127.0.0.1:${o.proxyPort}`,
      "--drain-seconds",
      String(o.drainSeconds),
    ],
    env: vars,
    // The API and the proxy are pod-local; only the health port is for the kubelet (probes)
    // and Prometheus (/metrics), and it serves nothing that changes state.
    ports: [{ name: "kubemoot-health", containerPort: o.healthPort, protocol: "TCP" }],
    // Readiness asks for the scheduler service (NOT_SERVING while draining); liveness for
    // kubemoot.liveness, which the sidecar keeps SERVING until it exits, so a drain is never
    // taken for a hang.
    startupProbe: { ...grpc(""), periodSeconds: 1, failureThreshold: 30 },
    readinessProbe: {
      ...grpc("kubemoot.scheduler.v1.SchedulerService"),
      periodSeconds: 5,
      failureThreshold: 2,
    },
    livenessProbe: {
      ...grpc("kubemoot.liveness"),
      periodSeconds: 10,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
    resources: o.resources,
    ...(ns
      ? { volumeMounts: [{ name: NATS_SECRET_VOLUME, mountPath: NATS_SECRET_MOUNT, readOnly: true }] }
      : {}),
    securityContext: {
      runAsNonRoot: true,
      runAsUser: o.runAsUser,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    },
  };
}

function statusOps(pod: PodLike, value: string): JsonPatchOp[] {
  const annotations = pod.metadata?.annotations;
  if (annotations?.[STATUS_ANNOTATION] === value) return [];
  if (!pod.metadata)
    return [{ op: "add", path: "/metadata", value: { annotations: { [STATUS_ANNOTATION]: value } } }];
  if (!isPlainObject(annotations)) {
    return [{ op: "add", path: "/metadata/annotations", value: { [STATUS_ANNOTATION]: value } }];
  }
  return [{ op: "add", path: `/metadata/annotations/${pointerToken(STATUS_ANNOTATION)}`, value }];
}

function hasSidecar(pod: PodLike): boolean {
  const named = (list: unknown) =>
    Array.isArray(list) && list.some((c) => isPlainObject(c) && c.name === SIDECAR_CONTAINER_NAME);
  return named(pod.spec?.initContainers) || named(pod.spec?.containers);
}

/** The env ops that set OLLAMA_HOST on container `i` (none when already right). */
function ollamaHostOps(container: Record<string, unknown>, i: number, host: string): JsonPatchOp[] {
  const base = `/spec/containers/${i}/env`;
  const env = Array.isArray(container.env) ? container.env : undefined;
  if (!env) return [{ op: "add", path: base, value: [{ name: "OLLAMA_HOST", value: host }] }];
  const j = env.findIndex((e) => isPlainObject(e) && e.name === "OLLAMA_HOST");
  if (j < 0) return [{ op: "add", path: `${base}/-`, value: { name: "OLLAMA_HOST", value: host } }];
  if (jsonEqual(env[j], { name: "OLLAMA_HOST", value: host })) return [];
  // Also replaces a valueFrom: the proxy is the point of injection.
  return [{ op: "replace", path: `${base}/${j}`, value: { name: "OLLAMA_HOST", value: host } }];
}

/**
 * The patch for one pod. `namespace` is the admission request's namespace (a pod created by a
 * ReplicaSet carries none in its metadata yet).
 */
export function injectSidecar(
  pod: PodLike,
  binding: AgentInjectionBinding | undefined,
  options: InjectionOptions,
  namespace = pod.metadata?.namespace ?? "",
): InjectionResult {
  const labels = pod.metadata?.labels ?? {};
  if (labels[INJECT_LABEL] !== "true") {
    return { patch: [], injected: false, reasons: [`not labelled ${INJECT_LABEL}: "true"`] };
  }
  if (PROTECTED_NAMESPACES.includes(namespace)) {
    return { patch: [], injected: false, reasons: [`namespace ${namespace} is never mutated`] };
  }
  if (hasSidecar(pod)) {
    return { patch: [], injected: false, reasons: [`container ${SIDECAR_CONTAINER_NAME} already present`] };
  }
  const skip = (reason: string): InjectionResult => ({
    patch: statusOps(pod, `skipped: ${reason}`),
    injected: false,
    reasons: [reason],
  });
  const agent = labels[AGENT_LABEL];
  if (!agent) return skip(`no ${AGENT_LABEL} label names the pod's Agent`);
  if (!binding) {
    return skip(
      `Agent ${namespace}/${agent} has no binding yet (not reconciled, or unknown to the operator)`,
    );
  }
  if (binding.namespace !== namespace || binding.name !== agent) {
    return skip(`binding is for ${binding.namespace}/${binding.name}, not ${namespace}/${agent}`);
  }
  const containers = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  if (containers.length === 0) return skip("pod has no containers");

  const crewLabel = labels[CREW_LABEL];
  const sidecar = sidecarContainer(
    { namespace, name: agent, ...(crewLabel ? { crew: `${namespace}/${crewLabel}` } : {}) },
    binding.env,
    options,
  );
  const patch: JsonPatchOp[] = [];
  // First init container: later init containers (migrations, warm-ups) can use it too.
  if (Array.isArray(pod.spec?.initContainers)) {
    patch.push({ op: "add", path: "/spec/initContainers/0", value: sidecar });
  } else {
    patch.push({ op: "add", path: "/spec/initContainers", value: [sidecar] });
  }
  const only = pod.metadata?.annotations?.[ENV_CONTAINERS_ANNOTATION]
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const host = ollamaHost(options);
  containers.forEach((c, i) => {
    if (!isPlainObject(c)) return;
    if (only && !only.includes(String(c.name))) return;
    patch.push(...ollamaHostOps(c, i, host));
  });
  if (options.natsSecret) {
    const volume = { name: NATS_SECRET_VOLUME, secret: { secretName: options.natsSecret.name } };
    if (Array.isArray(pod.spec?.volumes)) patch.push({ op: "add", path: "/spec/volumes/-", value: volume });
    else patch.push({ op: "add", path: "/spec/volumes", value: [volume] });
  }
  const grace = pod.spec?.terminationGracePeriodSeconds;
  const needed = options.drainSeconds + GRACE_MARGIN_SECONDS;
  if (grace === undefined || grace < needed) {
    patch.push({ op: "add", path: "/spec/terminationGracePeriodSeconds", value: needed });
  }
  const reasons = [`injected ${SIDECAR_CONTAINER_NAME} for Agent ${namespace}/${agent}`];
  patch.push(...statusOps(pod, "injected"));
  return { patch, injected: true, reasons };
}
