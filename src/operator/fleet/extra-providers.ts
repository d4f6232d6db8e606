// The binder's manifest source plus the ModelProviders fleet placement made (manifests mode,
// where there is no API server to write them to): the binder binds agents to them and the
// publisher probes them like any other provider. A ModelProvider of the same namespace and
// name in the manifests wins.
import type { ClusterSnapshot, ModelProvider } from "../../binding/index.js";
import { convertObjects, type KubeObject } from "../kube/index.js";
import {
  type ChangeListener,
  type ManifestSource,
  type ProviderInfo,
  providerInfos,
} from "../sources/index.js";
import type { RawObject } from "./desired.js";

export interface SourceWithExtras extends ManifestSource {
  /** Replaces the extra providers and triggers a reconcile. */
  setExtraProviders(objects: readonly RawObject[]): void;
}

/**
 * `onSourceChange` hears the inner source's own changes (not the extra providers'): the fleet
 * re-reads the manifests only when the binder's source found them changed, instead of scanning
 * the same files on a timer of its own.
 */
export function withExtraProviders(inner: ManifestSource, onSourceChange?: () => void): SourceWithExtras {
  let extra: ModelProvider[] = [];
  let listener: ChangeListener | undefined;
  const merged = (own: readonly ModelProvider[]): ModelProvider[] => {
    const taken = new Set(own.map((p) => `${p.namespace ?? ""}/${p.name}`));
    return [...own, ...extra.filter((p) => !taken.has(`${p.namespace ?? ""}/${p.name}`))];
  };
  return {
    kind: inner.kind,
    statusAuthority: inner.statusAuthority,
    start(onChange: ChangeListener) {
      listener = onChange;
      return inner.start((reason) => {
        onChange(reason);
        onSourceChange?.();
      });
    },
    snapshot(): ClusterSnapshot {
      const s = inner.snapshot();
      return extra.length === 0 ? s : { ...s, providers: merged(s.providers) };
    },
    providers(): ProviderInfo[] {
      if (extra.length === 0) return inner.providers();
      const own = inner.providers();
      const taken = new Set(own.map((p) => `${p.namespace ?? ""}/${p.name}`));
      return [...own, ...providerInfos(extra.filter((p) => !taken.has(`${p.namespace ?? ""}/${p.name}`)))];
    },
    ...(inner.resync ? { resync: () => inner.resync!() } : {}),
    stop: () => inner.stop(),
    setExtraProviders(objects: readonly RawObject[]) {
      const { snapshot } = convertObjects({
        models: [],
        providers: objects as KubeObject[],
        agents: [],
        policies: [],
        archetypes: [],
      });
      extra = [...snapshot.providers];
      listener?.("fleet providers changed");
    },
  };
}
