// Offer keys of kubemoot_provider_state (docs/rules/state.md §2.1, §10.1): with the scoped key
// layout, the writer of a provider's state also keeps `_o.<tok(provider)>`, the models the
// provider offers (resident or on disk), rewritten only when that set changes. A sidecar follows
// these small, rarely changing keys whole and the full states of the providers that offer its
// candidates only, so the probe churn of the rest of the fleet never reaches it. `_` starts no
// Kubernetes name, so an offer key is never a provider's state key.
import { kvToken, kvUntoken, type ProviderState } from "../core/index.js";
import { isObject, str, strings } from "./json-fields.js";
import { decodeJson, type KvEntry } from "./kv.js";

/** What a provider offers: the models it can serve. Empty: its state lists no model at all. */
export interface Offer {
  readonly provider: string;
  /** Sorted, no duplicates. */
  readonly models: readonly string[];
}

const PREFIX = "_o.";

/** The watch filter of every offer key. */
export const OFFERS_FILTER = `${PREFIX}*`;

export function offerKey(provider: string): string {
  return `${PREFIX}${kvToken(provider)}`;
}

/** Whether a provider-state key is an offer key (whole-bucket readers skip them). */
export function isOfferKey(key: string): boolean {
  return key.startsWith(PREFIX);
}

/** The models a state offers: resident (listed or with a footprint) or on disk, sorted. */
export function offeredModels(s: ProviderState): string[] {
  return [
    ...new Set([
      ...(s.loadedModels ?? []),
      ...Object.keys(s.loadedModelFootprintsMiB ?? {}),
      ...Object.keys(s.availableModelFootprintsMiB ?? {}),
    ]),
  ].sort();
}

export function offerJson(o: Offer): Record<string, unknown> {
  return { provider: o.provider, models: o.models };
}

/** The mirror decoder of offer keys: the provider comes from the key; unreadable values are skipped. */
export function offerDecoder(e: KvEntry): Offer | undefined {
  if (!isOfferKey(e.key)) return undefined;
  const provider = kvUntoken(e.key.slice(PREFIX.length));
  if (provider === undefined || provider === "") return undefined;
  let raw: unknown;
  try {
    raw = decodeJson(e.value);
  } catch {
    return undefined;
  }
  if (!isObject(raw) || (str(raw.provider) !== "" && str(raw.provider) !== provider)) return undefined;
  return { provider, models: [...new Set(strings(raw.models))].sort() };
}

/**
 * Whether an offer covers `model`. An offer of no model (a state that lists none) says nothing,
 * and counts as offering every model, as the full state would (tickets-copies.ts).
 */
export function offerCovers(o: Offer, model: string): boolean {
  return o.models.length === 0 || o.models.includes(model);
}
