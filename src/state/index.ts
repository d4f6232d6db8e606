// Public API of the shared state layer (docs/rules/state.md). Everything else in src/state is internal.
export {
  bucketSettings,
  MODEL_DEMAND_BUCKET,
  PROVIDER_STATE_BUCKET,
  PROVIDER_TICKETS_BUCKET,
} from "./buckets.js";
export type { CapacityWatch, ChangeResult } from "./capacity-watch.js";
export type { ClaimRefusalReason, ClaimRequest, ClaimResult, ClaimStats } from "./claim-types.js";
export { LEASE_GRACE_MS } from "./defaults.js";
export { type DemandBoard, type DemandSnapshot, demandSnapshotOf } from "./demand.js";
export {
  DISCUSSION_BINDING_REFRESH_MS,
  DISCUSSION_BINDINGS_BUCKET,
  type DiscussionBindingEvent,
  DiscussionBindings,
} from "./discussion-bindings.js";
export {
  DISCUSSION_PHASES,
  type DiscussionBinding,
  type DiscussionPhase,
  decodeDiscussionBinding,
  encodeDiscussionBinding,
  isDiscussionThreadId,
  MAX_DISCUSSION_CANDIDATES,
  validatePhase,
  validateThreadId,
} from "./discussion-codec.js";
export {
  DISCUSSION_EVENTS_FILTER,
  type DiscussionEvent,
  decodeDiscussionEvent,
  encodeDiscussionEvent,
} from "./discussion-events.js";
export type {
  BucketSettings,
  KvBucket,
  KvConnection,
  KvEntry,
  KvOperation,
  KvStore,
  KvWatch,
  MessageBus,
  WatchOptions,
} from "./kv.js";
export { type MemoryKvOptions, MemoryKvStore } from "./memory-kv.js";
export { connectNatsKv, type NatsKvOptions } from "./nats-kv.js";
export type { ProviderStateFilter, ProviderStateReader, ProviderStateWriter } from "./provider-state.js";
export type { StateStats, StateStore, StateStoreOptions } from "./store.js";
export { openStateStore } from "./store.js";
export { agentHolderId, holderAgent } from "./ticket-holder.js";
export { KEY_LAYOUTS, type KeyLayout, type KeyLayoutName, keyLayout } from "./ticket-keys.js";
export type { ProviderView, TicketBook, TicketRef } from "./tickets.js";
