// The fleet and tickets panels' data (docs/web-view.md "Fleet", "Tickets"), built from what the
// scheduler itself reads: provider states, live tickets, residency overlays and suspect marks.
// Pure: the same inputs give the same cards. The VRAM bar uses core's own accounting (resident
// models as residentModels counts them, the reserve as reserveMiB keeps it), so what the view
// shows is what placements decide on.
import {
  type ProviderState,
  type Residency,
  reserveMiB,
  residentModels,
  type Ticket,
} from "../core/index.js";
import { holderAgent } from "../state/index.js";
import type { ProviderCard, TicketRow, VramSegment } from "./view-types.js";

export interface FleetInputs {
  states: readonly ProviderState[];
  tickets: readonly Ticket[];
  residencies: readonly Residency[];
  /** provider → when a sidecar marked it suspect (epoch ms). */
  suspects: ReadonlyMap<string, number>;
  /** A provider's GPU name, when known. */
  labelOf?: (provider: string) => string | undefined;
}

function byName<T>(list: T[], name: (t: T) => string): T[] {
  return list.sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
}

/** One card per provider, sorted by name. */
export function providerCards(f: FleetInputs): ProviderCard[] {
  return byName(
    f.states.map((s) => card(s, f)),
    (c) => c.name,
  );
}

function card(s: ProviderState, f: FleetInputs): ProviderCard {
  const resident = residentModels(
    s,
    f.residencies.filter((r) => r.provider === s.name),
  );
  const loading = new Map<string, number>();
  for (const t of f.tickets) {
    if (t.provider !== s.name || resident.has(t.modelName)) continue;
    loading.set(t.modelName, Math.max(loading.get(t.modelName) ?? 0, Math.max(0, t.modelFootprintMiB)));
  }
  const total = s.totalVramMiB > 0 ? Math.round(s.totalVramMiB) : 0;
  const vram: VramSegment[] = [];
  let used = 0;
  for (const [model, mib] of byName([...resident], ([m]) => m)) {
    vram.push({ kind: "resident", model, mib: Math.round(mib) });
    used += Math.round(mib);
  }
  for (const [model, mib] of byName([...loading], ([m]) => m)) {
    vram.push({ kind: "loading", model, mib: Math.round(mib) });
    used += Math.round(mib);
  }
  if (total > 0) {
    const reserve = Math.min(reserveMiB(total), Math.max(0, total - used));
    vram.push({ kind: "reserve", mib: reserve });
    vram.push({ kind: "free", mib: Math.max(0, total - used - reserve) });
  }
  const probed = Date.parse(s.lastProbedAt ?? "");
  const suspectSince = f.suspects.get(s.name);
  const label = f.labelOf?.(s.name);
  const c: ProviderCard = {
    name: s.name,
    ...(label ? { label: label.slice(0, 64) } : {}),
    engine: s.engine ?? "ollama",
    ready: s.ready === true,
    suspect: suspectSince !== undefined && !(Number.isFinite(probed) && probed > suspectSince && s.ready),
    lastProbedAt: s.lastProbedAt ?? "",
    totalMiB: total,
    vram,
    loadedModels: [...resident.keys()].sort(),
    slots: {
      max: Math.max(1, s.maxParallel || 1),
      running: Math.max(0, s.activeCount || 0),
      queued: Math.max(0, s.queueDepth || 0),
    },
  };
  if (typeof s.kvCacheUsage === "number" && Number.isFinite(s.kvCacheUsage)) c.kvCacheUsage = s.kvCacheUsage;
  return c;
}

/** Live tickets, by provider then age (oldest first). */
export function ticketRows(tickets: readonly Ticket[], nowMs: number): TicketRow[] {
  const rows: TicketRow[] = [];
  for (const t of tickets) {
    if (t.expiresAt !== undefined && t.expiresAt <= nowMs) continue;
    const claimed = Date.parse(t.claimedAt);
    rows.push({
      id: t.ticketId,
      provider: t.provider,
      model: t.modelName,
      holder: holderAgent(t.holderId) || t.holderId,
      claimedAt: Number.isFinite(claimed) ? claimed : 0,
      expiresAt: t.expiresAt ?? 0,
      coldLoad: t.coldLoad === true,
      victims: Object.keys(t.evicts ?? {}).sort(),
    });
  }
  return rows.sort((a, b) =>
    a.provider !== b.provider ? (a.provider < b.provider ? -1 : 1) : a.claimedAt - b.claimedAt,
  );
}

/** Used VRAM per provider (MiB): resident models and loads in flight. */
export function usedVram(cards: readonly ProviderCard[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of cards) {
    let used = 0;
    for (const s of c.vram) if (s.kind === "resident" || s.kind === "loading") used += s.mib;
    out[c.name] = used;
  }
  return out;
}
