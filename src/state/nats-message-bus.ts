// The message bus over a NATS connection (kv.ts MessageBus): core publish and subscribe, no
// JetStream. A publish on a closed or draining connection is dropped, as one while disconnected
// is by NATS itself beyond its reconnect buffer.
import type { NatsConnection } from "@nats-io/transport-node";
import type { MessageBus } from "./kv.js";

export class NatsMessageBus implements MessageBus {
  constructor(private readonly nc: NatsConnection) {}

  publish(subject: string, data: Uint8Array): void {
    if (this.nc.isClosed() || this.nc.isDraining()) return;
    try {
      this.nc.publish(subject, data);
    } catch {
      // a subject this user may not publish on, or the connection closing: at most once
    }
  }

  subscribe(filter: string, onMessage: (subject: string, data: Uint8Array) => void): () => void {
    const sub = this.nc.subscribe(filter, {
      callback: (err, msg) => {
        if (err === null) onMessage(msg.subject, msg.data);
      },
    });
    return () => sub.unsubscribe();
  }
}
