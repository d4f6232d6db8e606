// The embedded store's message bus (kv.ts MessageBus, docs/rules/state.md §3): delivery within
// this process, at most once, like core NATS (./nats-message-bus.ts).
import { keyMatches, type MessageBus } from "./kv.js";

interface Subscription {
  filter: string;
  onMessage: (subject: string, data: Uint8Array) => void;
}

/** The embedded store's bus: delivery in this process, on a later microtask (never re-entrant). */
export class MemoryMessageBus implements MessageBus {
  private readonly subs = new Set<Subscription>();

  constructor(private readonly connected: () => boolean = () => true) {}

  publish(subject: string, data: Uint8Array): void {
    if (!this.connected()) return;
    for (const s of this.subs) {
      if (!keyMatches(s.filter, subject)) continue;
      const copy = data.slice();
      queueMicrotask(() => {
        if (this.subs.has(s)) s.onMessage(subject, copy);
      });
    }
  }

  subscribe(filter: string, onMessage: (subject: string, data: Uint8Array) => void): () => void {
    const s: Subscription = { filter, onMessage };
    this.subs.add(s);
    return () => {
      this.subs.delete(s);
    };
  }
}
