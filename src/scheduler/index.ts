// The one call loop (docs/design.md §3): place, wait on state, replan, claim, the ledger, held
// plans and state writes, over the pure core and a SchedulerStore. The sidecar's API and proxy
// and the simulation all drive this; what they may use is exported here and nothing else.
export type { Acquired } from "./call-loop.js";
export { isAgentRef, type SchedulerConfig, schedulerConfigFromEnv } from "./config.js";
export {
  type ConversationRef,
  MAX_CONVERSATION_ID,
  MAX_CONVERSATIONS,
  type PromptMarks,
} from "./conversations.js";
export type { FairView } from "./fair-share.js";
export { composeHooks } from "./hooks.js";
export type { PromptEstimate } from "./ledger.js";
export { Scheduler } from "./scheduler.js";
export type { SchedulerStore } from "./store.js";
export type { SchedulerTimers } from "./timers.js";
export type {
  AttributionOut,
  CallOutcome,
  DecisionEvent,
  DiscussionLink,
  Phase,
  PlaceInput,
  PlacementOut,
  ProviderOps,
  RefusalOut,
  SchedulerHooks,
  ThreadBinding,
} from "./types.js";
