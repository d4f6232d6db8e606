// What the simulation records of each decision the scheduler made (for the properties in
// ../properties.ts): the copies the call could have used, what was chosen and the chosen
// provider's budget, and whether the state layer's budget rule accepts the claim on the very
// state the decision read.
import { claimFits, type Decision, type PlacementSnapshot, type SnapshotIndex } from "../../core/index.js";
import type { CallState, CopyInfo, DecisionRecord } from "../types.js";

export function decisionRecord(
  atMs: number,
  call: CallState,
  snapshot: PlacementSnapshot,
  ix: SnapshotIndex,
  d: Decision,
): DecisionRecord {
  const acceptable = call.turn.acceptable.map((c) => c.model);
  const warmFreeSlot: CopyInfo[] = [];
  for (const m of acceptable) {
    for (const v of ix.warmAt.get(m) ?? []) {
      if (v.ineligible !== undefined) continue;
      const n = v.byModel.get(m)?.count ?? 0;
      if (n < v.slots) warmFreeSlot.push({ provider: v.name, model: m, tickets: n, slots: v.slots });
    }
  }
  const copyModel = d.kind === "claim" ? d.model : acceptable[0]!;
  const copies: CopyInfo[] = [];
  for (const v of ix.warmAt.get(copyModel) ?? []) {
    if (v.ineligible !== undefined) continue;
    copies.push({
      provider: v.name,
      model: copyModel,
      tickets: v.byModel.get(copyModel)?.count ?? 0,
      slots: v.slots,
    });
  }
  const rec: DecisionRecord = {
    atMs,
    callId: call.id,
    agent: call.turn.agent.id,
    preferred: acceptable[0]!,
    acceptable,
    kind: d.kind,
    evicts: {},
    victimTickets: {},
    warmFreeSlot,
    copies,
  };
  if (d.kind !== "claim") return rec;
  const v = ix.byName.get(d.provider)!;
  rec.step = d.step;
  rec.provider = d.provider;
  rec.model = d.model;
  rec.cold = d.cold;
  rec.loading = d.loading;
  rec.evicts = { ...d.evicts };
  for (const victim of Object.keys(d.evicts)) rec.victimTickets[victim] = v.byModel.get(victim)?.count ?? 0;
  rec.target = {
    usable: v.usable,
    free: v.free,
    committed: v.residentSum + v.loadingSum - v.credit,
    footprint: d.footprintMiB,
    active: v.active,
  };
  rec.claimFits = claimFits(
    v.state,
    snapshot.tickets.filter((t) => t.provider === d.provider),
    snapshot.residencies,
    { modelName: d.model, modelFootprintMiB: d.footprintMiB, evicts: d.evicts },
    snapshot.nowMs,
  );
  return rec;
}
