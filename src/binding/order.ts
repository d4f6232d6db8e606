// Orderings shared by the binder: every sort is by code point, never by locale, so a result
// is the same on every machine.

/** Code-point order of two strings. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `<ns>/<name>`, or `<name>` for cluster-scoped objects. */
export function objectKey(obj: { namespace?: string | undefined; name: string }): string {
  return obj.namespace === undefined ? obj.name : `${obj.namespace}/${obj.name}`;
}

/** Sorts a copy by namespace (cluster scope first), then name. */
export function byKey<T extends { namespace?: string | undefined; name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => cmp(a.namespace ?? "", b.namespace ?? "") || cmp(a.name, b.name));
}
