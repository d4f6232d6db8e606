// The few API calls the operator makes, over @kubernetes/client-node 1.x.
//
// Content types are set EXPLICITLY: client-node 1.x picks `application/json-patch+json` as the
// default Content-Type of every PATCH, so a merge patch body sent without an override is
// rejected (or misapplied) by the API server. `setHeaderOptions` adds a request middleware
// that overrides the header for that one call.
import {
  AppsV1Api,
  CoreV1Api,
  type CoreV1Event,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { RESOURCES, type ResourceType } from "./resources.js";

export const FIELD_MANAGER = "kubemoot-scheduler";

/** An object as the API server returns it (JSON). */
export interface KubeObject extends KubernetesObject {
  spec?: unknown;
  status?: unknown;
  [key: string]: unknown;
}

export type KubeList = KubernetesListObject<KubeObject>;

/** One RFC 6902 operation (the ones the operator sends). */
export type JsonPatchOp =
  | { op: "test" | "add" | "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

/** The API calls of the operator; an interface so the sink can be tested without HTTP. */
export interface KubeApi {
  list(r: ResourceType, namespace?: string): Promise<KubeList>;
  /** JSON merge patch of the status subresource (Content-Type application/merge-patch+json). */
  mergePatchStatus(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: object,
  ): Promise<KubeObject>;
  /** JSON patch of a Deployment (Content-Type application/json-patch+json). */
  jsonPatchDeployment(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<KubeObject>;
  /** Creates a core/v1 Event. */
  createEvent(namespace: string, event: CoreV1Event): Promise<void>;
  /** Creates one of our custom objects (fleet placement writes ModelReplicas, ModelProviders). */
  createObject(r: ResourceType, namespace: string | undefined, body: KubeObject): Promise<KubeObject>;
  /** JSON merge patch of a custom object's main resource (spec, metadata). */
  mergePatchObject(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: object,
  ): Promise<KubeObject>;
  /** Reads a Secret (topology webhook credentials); undefined when it does not exist. */
  readSecret(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Deletes a custom object; a 404 is the caller's to ignore. */
  deleteObject(r: ResourceType, namespace: string | undefined, name: string): Promise<void>;
}

export const MERGE_PATCH = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
export const JSON_PATCH = setHeaderOptions("Content-Type", PatchStrategy.JsonPatch);

export class ClientNodeKubeApi implements KubeApi {
  private readonly custom: CustomObjectsApi;
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async list(r: ResourceType, namespace?: string): Promise<KubeList> {
    if (r.kind === RESOURCES.Node.kind) return (await this.core.listNode()) as unknown as KubeList;
    if (r.kind === RESOURCES.ConfigMap.kind) {
      const list =
        namespace === undefined
          ? await this.core.listConfigMapForAllNamespaces()
          : await this.core.listNamespacedConfigMap({ namespace });
      return list as unknown as KubeList;
    }
    if (r.kind === RESOURCES.Deployment.kind) {
      const list =
        namespace === undefined
          ? await this.apps.listDeploymentForAllNamespaces()
          : await this.apps.listNamespacedDeployment({ namespace });
      return list as unknown as KubeList;
    }
    const base = { group: r.group, version: r.version, plural: r.plural };
    const list: unknown =
      r.namespaced && namespace !== undefined
        ? await this.custom.listNamespacedCustomObject({ ...base, namespace })
        : await this.custom.listClusterCustomObject(base);
    return list as KubeList;
  }

  async mergePatchStatus(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: object,
  ): Promise<KubeObject> {
    const base = { group: r.group, version: r.version, plural: r.plural, name, body: patch };
    const out: unknown =
      r.namespaced && namespace !== undefined
        ? await this.custom.patchNamespacedCustomObjectStatus(
            { ...base, namespace, fieldManager: FIELD_MANAGER },
            MERGE_PATCH,
          )
        : await this.custom.patchClusterCustomObjectStatus(
            { ...base, fieldManager: FIELD_MANAGER },
            MERGE_PATCH,
          );
    return out as KubeObject;
  }

  async jsonPatchDeployment(
    namespace: string,
    name: string,
    ops: readonly JsonPatchOp[],
  ): Promise<KubeObject> {
    const out = await this.apps.patchNamespacedDeployment(
      { namespace, name, body: ops, fieldManager: FIELD_MANAGER },
      JSON_PATCH,
    );
    return out as unknown as KubeObject;
  }

  async createEvent(namespace: string, event: CoreV1Event): Promise<void> {
    await this.core.createNamespacedEvent({ namespace, body: event });
  }

  async createObject(r: ResourceType, namespace: string | undefined, body: KubeObject): Promise<KubeObject> {
    const base = { group: r.group, version: r.version, plural: r.plural, body, fieldManager: FIELD_MANAGER };
    const out: unknown =
      r.namespaced && namespace !== undefined
        ? await this.custom.createNamespacedCustomObject({ ...base, namespace })
        : await this.custom.createClusterCustomObject(base);
    return out as KubeObject;
  }

  async mergePatchObject(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: object,
  ): Promise<KubeObject> {
    const base = { group: r.group, version: r.version, plural: r.plural, name, body: patch };
    const out: unknown =
      r.namespaced && namespace !== undefined
        ? await this.custom.patchNamespacedCustomObject(
            { ...base, namespace, fieldManager: FIELD_MANAGER },
            MERGE_PATCH,
          )
        : await this.custom.patchClusterCustomObject({ ...base, fieldManager: FIELD_MANAGER }, MERGE_PATCH);
    return out as KubeObject;
  }

  async readSecret(namespace: string, name: string): Promise<KubeObject | undefined> {
    try {
      return (await this.core.readNamespacedSecret({ namespace, name })) as unknown as KubeObject;
    } catch (err) {
      if (httpStatus(err) === 404) return undefined;
      throw err;
    }
  }

  async deleteObject(r: ResourceType, namespace: string | undefined, name: string): Promise<void> {
    const base = { group: r.group, version: r.version, plural: r.plural, name };
    if (r.namespaced && namespace !== undefined) {
      await this.custom.deleteNamespacedCustomObject({ ...base, namespace });
    } else {
      await this.custom.deleteClusterCustomObject(base);
    }
  }
}

/** The HTTP status of a failed call (ApiException.code), when there is one. */
export function httpStatus(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === "number") return e.code;
  if (typeof e.statusCode === "number") return e.statusCode;
  return undefined;
}

/** A short message for logs: status and the API server's Status message, not the whole body. */
export function errorMessage(err: unknown): string {
  const status = httpStatus(err);
  const body = (err as { body?: unknown })?.body;
  let detail: string | undefined;
  if (typeof body === "string") {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === "string") detail = parsed.message;
    } catch {
      detail = body.slice(0, 200);
    }
  } else if (
    body &&
    typeof body === "object" &&
    typeof (body as { message?: unknown }).message === "string"
  ) {
    detail = (body as { message: string }).message;
  }
  const base = detail ?? (err instanceof Error ? err.message.split("\n")[0]! : String(err));
  return status !== undefined ? `HTTP ${status}: ${base}` : base;
}
