// What readers hold that only a newer `lastProbedAt` settles (docs/rules/binding.md §8
// "Provider publisher", docs/rules/state.md §2.1–§2.2): the publisher skips a probe that
// changes nothing else, so it must know when the probe time alone matters to someone. Three
// readers of the tickets bucket compare against the published probe time:
// - a suspect mark (`_suspect__<provider>`, `since`): planners skip a ready provider until a
//   probe newer than `since` (src/core eligibility);
// - a residency overlay (`writtenAt`) of a model the published state does not list: it counts
//   until a probe newer than it (by the slack core allows) still does not list the model
//   (src/core overlayCurrent);
// - on a fixed-model engine, our tickets claimed after the probe count on top of its published
//   running and waiting requests (src/core fixedLoad, docs/rules/engines.md "Placement").
// Pure but for `publishNeededFrom`, which reads the marks through a caller's function (the
// state layer's `tickets.everything()`) and shares one read among probes close together.
import {
  FRESH_READ_MS,
  isFixedModelEngine,
  overlayCurrent,
  type ProviderState,
  type Residency,
  type Ticket,
} from "../core/index.js";

/** What the tickets bucket holds (the shape of the state layer's `tickets.everything()`). */
export interface ReaderMarks {
  /** Live tickets of every provider. */
  tickets: readonly Ticket[];
  residencies: readonly Residency[];
  /** Suspect marks: provider → since (epoch ms). */
  suspects: ReadonlyMap<string, number>;
}

/**
 * Whether a state equal to `last` but for a newer `lastProbedAt` would change what some reader
 * decides, given the marks readers hold: then an unchanged probe must still be written.
 */
export function newerProbeNeeded(last: ProviderState, marks: ReaderMarks): boolean {
  const probed = Date.parse(last.lastProbedAt);
  // An unreadable probe time settles nothing; a readable one would settle all of it.
  if (!Number.isFinite(probed)) return true;
  const since = marks.suspects.get(last.name);
  // Not ready is reason enough to skip a provider: only a ready one is held back by its mark.
  if (last.ready && since !== undefined && since >= probed) return true;
  for (const r of marks.residencies) {
    if (r.provider !== last.name || r.writtenAt === undefined || !(r.writtenAt > 0)) continue;
    const listed =
      (last.loadedModels ?? []).includes(r.modelName) || r.modelName in (last.loadedModelFootprintsMiB ?? {});
    if (!listed && overlayCurrent(last, r)) return true;
  }
  if (isFixedModelEngine(last.engine)) {
    for (const t of marks.tickets) {
      if (t.provider === last.name && Date.parse(t.claimedAt) > probed) return true;
    }
  }
  return false;
}

export interface PublishNeededOptions {
  /**
   * Probes asking within this many ms of one read share it (ms); default FRESH_READ_MS (200),
   * the age any reader's view of the state may have.
   */
  shareMs?: number;
  /** Monotonic clock (ms); default performance.now. */
  clock?: () => number;
}

/**
 * The publisher's `publishNeeded` from a reader of the marks (the operator passes the state
 * layer's `tickets.everything()`). A failed read is not kept: the next probe reads again.
 */
export function publishNeededFrom(
  read: () => Promise<ReaderMarks>,
  o: PublishNeededOptions = {},
): (last: ProviderState) => Promise<boolean> {
  const shareMs = o.shareMs ?? FRESH_READ_MS;
  const clock = o.clock ?? (() => performance.now());
  let shared: { at: number; marks: Promise<ReaderMarks> } | undefined;
  return async (last) => {
    const now = clock();
    if (shared === undefined || now - shared.at > shareMs || now < shared.at) {
      const mine = { at: now, marks: read() };
      shared = mine;
      mine.marks.catch(() => {
        if (shared === mine) shared = undefined;
      });
    }
    return newerProbeNeeded(last, await shared.marks);
  };
}
