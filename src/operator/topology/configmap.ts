// The ConfigMap arm's read: one key of one ConfigMap, looked up through an injected getter
// (the operator's informer cache, or manifests in a dry run). A missing ConfigMap or key is a
// read failure, not an empty snapshot: the last accepted snapshot stays in force meanwhile.
import { ErrorCode, KubemootError } from "../../errors/index.js";

export interface ConfigMapObject {
  data?: Record<string, string>;
}

/** Looks a ConfigMap up; undefined when it does not exist. */
export type ConfigMapGetter = (
  namespace: string,
  name: string,
) => ConfigMapObject | undefined | Promise<ConfigMapObject | undefined>;

export interface ConfigMapArmRef {
  configMapRef: { namespace: string; name: string };
  key: string;
}

/** The document text under `key`; throws NotFound naming the ConfigMap (and key). */
export async function readConfigMapSnapshot(
  arm: ConfigMapArmRef,
  getConfigMap: ConfigMapGetter,
  field = "configMap",
): Promise<string> {
  const { namespace, name } = arm.configMapRef;
  const cm = await getConfigMap(namespace, name);
  if (cm === undefined) {
    throw new KubemootError(ErrorCode.NotFound, `ConfigMap ${namespace}/${name} not found`, {
      field: `${field}.configMapRef`,
    });
  }
  const text = cm.data?.[arm.key];
  if (text === undefined) {
    throw new KubemootError(ErrorCode.NotFound, `ConfigMap ${namespace}/${name} has no key "${arm.key}"`, {
      field: `${field}.key`,
    });
  }
  return text;
}
