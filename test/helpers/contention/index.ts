// One contention harness for the race and cluster tests and `bench contention`: racing claimer
// processes, the buckets they race on, a referee that checks every revision for overcommit, and
// the totals of their reports.
export type { CheckedState, RefusalRecord, Violation } from "./overcommit-checker.js";
export { classifyTicketsKey, OvercommitChecker, unjustifiedRefusals, usable } from "./overcommit-checker.js";
export { Referee } from "./referee.js";
export { type ContentionBuckets, prepareBuckets } from "./setup.js";
export type { FollowedEntry } from "./ticket-follower.js";
export { type ContentionTotals, totals } from "./totals.js";
export {
  type HoldConfig,
  killWorker,
  type RaceConfig,
  type RaceProvider,
  startRacers,
  startWorker,
  type WorkerReport,
} from "./workers.js";
