// Per-discussion bindings over NATS (docs/rules/binding.md §9): the binder the operator runs.
export { DiscussionBinder } from "./binder.js";
