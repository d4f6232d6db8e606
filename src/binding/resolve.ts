// Name resolution for namespaced references (docs/rules/binding.md "ModelProvider"): a name is
// looked up in the agent's namespace, then the `kubemoot` namespace, then cluster scope
// (objects without a namespace). Models an agent can bind to are found the same way, a nearer
// scope shadowing a farther Model of the same name.
import { cmp } from "./order.js";

export const SYSTEM_NAMESPACE = "kubemoot";

type Scoped = { namespace?: string | undefined; name: string };

export interface ScopedIndex<T extends Scoped> {
  /** The object a reference from `namespace` resolves to. */
  resolve(namespace: string, name: string): T | undefined;
  /** Every object visible from `namespace`, one per name (the nearest), sorted by name. */
  visible(namespace: string): T[];
}

/** Scopes searched from a namespace, nearest first; undefined is cluster scope. */
export function scopesFrom(namespace: string): (string | undefined)[] {
  return namespace === SYSTEM_NAMESPACE ? [namespace, undefined] : [namespace, SYSTEM_NAMESPACE, undefined];
}

export function scopedIndex<T extends Scoped>(items: readonly T[]): ScopedIndex<T> {
  const byScope = new Map<string | undefined, Map<string, T>>();
  for (const item of items) {
    const scope = byScope.get(item.namespace) ?? new Map<string, T>();
    byScope.set(item.namespace, scope);
    if (!scope.has(item.name)) scope.set(item.name, item);
  }
  return {
    resolve(namespace, name) {
      for (const scope of scopesFrom(namespace)) {
        const hit = byScope.get(scope)?.get(name);
        if (hit) return hit;
      }
      return undefined;
    },
    visible(namespace) {
      const out = new Map<string, T>();
      for (const scope of scopesFrom(namespace)) {
        for (const [name, item] of byScope.get(scope) ?? []) if (!out.has(name)) out.set(name, item);
      }
      return [...out.values()].sort((a, b) => cmp(a.name, b.name));
    },
  };
}
