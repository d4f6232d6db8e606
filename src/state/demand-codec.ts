// Demand entries of kubemoot_model_demand (docs/rules/state.md §2.3): values read tolerantly by
// the kind their key names (the keys themselves are the layout's: ticket-keys.ts).

import type { DemandEntry, IntentEntry, SelEntry, UseEntry, WaitEntry } from "../core/index.js";
import { isObject, num, str, strings } from "./json-fields.js";

/**
 * Reads a demand value; undefined (skip) when the key is not a demand key or the value does not
 * match it. An entry without a usable expiresAt lives until `fallbackExpiresAt` (the bucket TTL).
 */
export function parseDemand(key: string, raw: unknown, fallbackExpiresAt: number): DemandEntry | undefined {
  const kind = key.slice(0, key.indexOf("."));
  if (!isObject(raw) || (raw.kind !== undefined && raw.kind !== kind)) return undefined;
  const expiresAt =
    typeof raw.expiresAt === "number" && Number.isFinite(raw.expiresAt) ? raw.expiresAt : fallbackExpiresAt;
  switch (kind) {
    case "wait":
      return { kind, model: str(raw.model), agent: str(raw.agent), expiresAt } as WaitEntry;
    case "intent":
      return {
        kind,
        model: str(raw.model),
        agent: str(raw.agent),
        thread: str(raw.thread),
        expiresAt,
      } as IntentEntry;
    case "use":
      return {
        kind,
        model: str(raw.model),
        agent: str(raw.agent),
        rate: num(raw.rate),
        updatedAt: num(raw.updatedAt),
        lastUsedAt: num(raw.lastUsedAt),
        expiresAt,
        ...(num(raw.serviceMs) > 0 ? { serviceMs: num(raw.serviceMs) } : {}),
      } as UseEntry;
    case "sel":
      return {
        kind,
        rate: num(raw.rate),
        updatedAt: num(raw.updatedAt),
        expiresAt,
        models: strings(raw.models),
      } as SelEntry;
    default:
      return undefined;
  }
}
