// What the scheduler needs of the shared state (docs/design.md §5): reads for the snapshot,
// the ticket protocol, demand writes and the capacity watch. The sidecar passes its StateStore
// (src/state), which is this shape; the simulation passes an adapter of its simulated store
// (src/sim), so both run this one loop over the very same decisions.
import type { CapacityWatch, DemandBoard, ProviderStateReader, TicketBook } from "../state/index.js";

export interface SchedulerStore {
  readonly providers: Pick<ProviderStateReader, "list" | "peek">;
  readonly tickets: Pick<
    TicketBook,
    | "everything"
    | "claim"
    | "release"
    | "renew"
    | "writeResidency"
    | "clearResidency"
    | "markSuspect"
    | "writeConversation"
    | "deleteConversation"
    | "allTickets"
    | "find"
  >;
  readonly demand: Pick<
    DemandBoard,
    | "snapshot"
    | "putWait"
    | "clearWait"
    | "putIntents"
    | "clearThread"
    | "recordUse"
    | "recordSelection"
    | "putQueue"
    | "clearQueue"
    | "putService"
    | "services"
    | "flush"
  >;
  readonly capacity: Pick<CapacityWatch, "counter" | "available" | "awaitChange">;
}
