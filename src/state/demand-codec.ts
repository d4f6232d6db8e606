// Demand entries of kubemoot_model_demand (docs/rules/state.md §2.3): values read tolerantly by
// the kind their key names (the keys themselves are the layout's: ticket-keys.ts).

import {
  type Band,
  type DemandEntry,
  type IntentEntry,
  parseBand,
  type QueueEntry,
  type SelEntry,
  type ServiceEntry,
  type UseEntry,
  type WaitEntry,
} from "../core/index.js";
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
        ...bandsOf(raw.bands),
      } as UseEntry;
    case "sel":
      return {
        kind,
        rate: num(raw.rate),
        updatedAt: num(raw.updatedAt),
        expiresAt,
        models: strings(raw.models),
      } as SelEntry;
    case "queue": {
      // A waiter without its ranking fields cannot be ordered: skipped, not guessed.
      const band = parseBand(str(raw.band));
      const weight = num(raw.weight);
      if (band === undefined || !(weight > 0) || str(raw.id) === "" || !(num(raw.since) > 0))
        return undefined;
      return {
        kind,
        id: str(raw.id),
        model: str(raw.model),
        crew: str(raw.crew),
        band,
        weight,
        since: num(raw.since),
        expiresAt,
      } as QueueEntry;
    }
    case "svc": {
      const weight = num(raw.weight);
      if (!(weight > 0) || str(raw.crew) === "") return undefined;
      return {
        kind,
        crew: str(raw.crew),
        weight,
        service: Math.max(0, num(raw.service)),
        updatedAt: num(raw.updatedAt),
        expiresAt,
      } as ServiceEntry;
    }
    default:
      return undefined;
  }
}

/** A use entry's last use per band (docs/rules/fairness.md §5); unknown bands are skipped. */
function bandsOf(raw: unknown): Pick<UseEntry, "bands"> {
  if (!isObject(raw)) return {};
  const bands: Partial<Record<Band, number>> = {};
  for (const [k, v] of Object.entries(raw)) {
    const band = parseBand(k);
    if (band !== undefined && num(v) > 0) bands[band] = num(v);
  }
  return Object.keys(bands).length > 0 ? { bands } : {};
}
