// Joint admission of several roles of one deployment (docs/rules/topology.md): gangs are admitted in
// order against capacity that shrinks with every reservation. A gang that fits holds its
// reservation while the set waits (its domain stays idle); the answer to a waiting set is
// Pending, never a retry that would evict siblings; a set that has not assembled within 30
// minutes is parked and releases what it held. Time is an input.
import { admitGang, type GangAdmission } from "./admit.js";
import { type Capacity, reserve } from "./capacity.js";
import type { Gang, TopologyAssignment } from "./types.js";

export const PARK_AFTER_MS = 30 * 60 * 1000;

export interface GangSet {
  key: string;
  gangs: readonly Gang[];
  /** When the set started waiting (ms since the epoch); absent means now. */
  since?: number;
}

export type JointState = "Admitted" | "Pending" | "Parked";

export interface JointGangResult {
  admitted: boolean;
  /** Set while the gang holds a reservation for a waiting set. */
  held: boolean;
  profile?: string;
  assignment?: TopologyAssignment;
  message: string;
}

export interface JointResult {
  state: JointState;
  gangs: Map<string, JointGangResult>;
  /** The capacity after the set: with its reservations when Admitted or Pending. */
  capacity: Capacity;
}

export function admitJointly(set: GangSet, capacity: Capacity, now: number): JointResult {
  let cap = capacity;
  const outcomes = new Map<string, GangAdmission>();
  for (const gang of set.gangs) {
    const a = admitGang(gang, cap);
    outcomes.set(gang.key, a);
    if (a.admitted) cap = reserve(cap, a.takes, gang.requests);
  }
  const waiting = set.gangs.filter((g) => !outcomes.get(g.key)!.admitted).map((g) => g.key);
  const gangs = new Map<string, JointGangResult>();
  if (waiting.length === 0) {
    for (const [key, a] of outcomes) {
      if (!a.admitted) continue;
      gangs.set(key, {
        admitted: true,
        held: false,
        profile: a.profile,
        assignment: a.assignment,
        message: a.message,
      });
    }
    return { state: "Admitted", gangs, capacity: cap };
  }
  const waited = now - (set.since ?? now);
  const parked = waited >= PARK_AFTER_MS;
  const minutes = Math.floor(waited / 60_000);
  for (const [key, a] of outcomes) {
    if (!a.admitted) {
      gangs.set(key, {
        admitted: false,
        held: false,
        message: parked
          ? `Parked: the set ${set.key} has not assembled in ${minutes} minutes; ${a.message}`
          : `Pending: ${a.message}`,
      });
    } else if (parked) {
      gangs.set(key, {
        admitted: false,
        held: false,
        message: `Parked: the set ${set.key} has not assembled in ${minutes} minutes; reservation released`,
      });
    } else {
      gangs.set(key, {
        admitted: false,
        held: true,
        profile: a.profile,
        assignment: a.assignment,
        message: `Pending: fits and holds its reservation while the set waits for ${waiting.join(", ")}`,
      });
    }
  }
  return { state: parked ? "Parked" : "Pending", gangs, capacity: parked ? capacity : cap };
}
