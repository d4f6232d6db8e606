// AdmissionReview v1 in, AdmissionReview v1 out: the pure part of the webhook server.
//
// The webhook never denies a pod: injection is a convenience, and a pod it cannot help is
// admitted as written, with the reason as an admission warning (kubectl prints it) and in the
// pod's status annotation. Only a request that is not an AdmissionReview at all is an error.
import { invalidArgument } from "../../errors/index.js";
import { AGENT_LABEL, isPlainObject } from "../kube/index.js";
import { type AgentInjectionBinding, type InjectionResult, injectSidecar, type PodLike } from "./inject.js";
import type { InjectionOptions } from "./options.js";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";

/** Looks up an Agent's current binding (the operator's last reconcile). */
export type BindingLookup = (namespace: string, agent: string) => AgentInjectionBinding | undefined;

/**
 * A lookup over the agents of the latest bind result, e.g.
 * `lookupFromAgents(() => reconciler.lastResult?.bind.agents)`. The index is rebuilt only when
 * the list object changes (once per reconcile), not per admission request.
 */
export function lookupFromAgents(current: () => readonly AgentInjectionBinding[] | undefined): BindingLookup {
  let seen: readonly AgentInjectionBinding[] | undefined;
  let index = new Map<string, AgentInjectionBinding>();
  return (namespace, agent) => {
    const list = current();
    if (list !== seen) {
      seen = list;
      index = new Map((list ?? []).map((a) => [`${a.namespace}/${a.name}`, a]));
    }
    return index.get(`${namespace}/${agent}`);
  };
}

export interface AdmissionResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: "AdmissionReview";
  response: {
    uid: string;
    allowed: true;
    patchType?: "JSONPatch";
    /** Base64 of the JSON patch. */
    patch?: string;
    warnings?: string[];
  };
}

export interface ReviewOutcome {
  review: AdmissionResponse;
  /** The injection result; absent when the request was not about a pod. */
  result?: InjectionResult;
  namespace: string;
  pod: string;
}

/** Decides one AdmissionReview; throws KubemootError (invalid argument) on a malformed one. */
export function reviewAdmission(
  body: unknown,
  lookup: BindingLookup,
  options: InjectionOptions,
): ReviewOutcome {
  if (!isPlainObject(body) || body.kind !== "AdmissionReview") {
    throw invalidArgument("kind", "expected an AdmissionReview");
  }
  if (body.apiVersion !== ADMISSION_API_VERSION) {
    throw invalidArgument("apiVersion", `expected ${ADMISSION_API_VERSION}, got ${String(body.apiVersion)}`);
  }
  const request = body.request;
  if (!isPlainObject(request) || typeof request.uid !== "string" || request.uid === "") {
    throw invalidArgument("request.uid", "missing");
  }
  const uid = request.uid;
  const allow = (extra: Partial<AdmissionResponse["response"]> = {}): AdmissionResponse => ({
    apiVersion: ADMISSION_API_VERSION,
    kind: "AdmissionReview",
    response: { uid, allowed: true, ...extra },
  });
  const kind = isPlainObject(request.kind) ? request.kind : {};
  const pod = request.object;
  const podNamespace = isPlainObject(pod) ? (pod.metadata as PodLike["metadata"])?.namespace : undefined;
  const namespace = typeof request.namespace === "string" ? request.namespace : (podNamespace ?? "");
  if (kind.kind !== "Pod" || (kind.group ?? "") !== "" || !isPlainObject(pod)) {
    return { review: allow(), namespace, pod: "" };
  }
  const p = pod as PodLike;
  const podName = p.metadata?.name || `${p.metadata?.generateName ?? ""}*`;
  const agent = p.metadata?.labels?.[AGENT_LABEL];
  const binding = agent ? lookup(namespace, agent) : undefined;
  const result = injectSidecar(p, binding, options, namespace);
  const warnings =
    result.injected || result.patch.length === 0 ? undefined : [`kubemoot: ${result.reasons.join("; ")}`];
  const review =
    result.patch.length > 0
      ? allow({
          patchType: "JSONPatch",
          patch: Buffer.from(JSON.stringify(result.patch)).toString("base64"),
          ...(warnings ? { warnings } : {}),
        })
      : allow();
  return { review, result, namespace, pod: podName };
}
