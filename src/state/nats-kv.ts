// The KV interface on NATS JetStream KV (@nats-io/kv; docs/rules/state.md §3–§4). Revisions
// are stream sequences; CAS is JetStream's expected-last-subject-sequence. The buckets may live
// in another JetStream domain or behind an API prefix (an account import): every call goes
// through the KV and JetStream clients, which name subjects for both. While the connection is
// down every operation fails at once with StateUnavailable ("NATS unavailable") instead of
// waiting for a timeout.

import { readFile } from "node:fs/promises";
import { type JetStreamClient, type JetStreamOptions, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Bucket, Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { redactSecrets, redactUrl } from "../log/index.js";
import { InFlight } from "./in-flight.js";
import type { BucketSettings, KvBucket, KvConnection, KvStore, MessageBus } from "./kv.js";
import { stateUnavailable } from "./kv-errors.js";
import { authenticatorFor } from "./nats-auth.js";
import { errorMessage, NatsBucket, toStateError } from "./nats-bucket.js";
import { NatsMessageBus } from "./nats-message-bus.js";

export interface NatsKvOptions {
  /** One URL or several (a cluster), e.g. "nats://127.0.0.1:4222". */
  servers: string | string[];
  /** Connection name shown by the server. */
  name?: string;
  /** Timeout of each JetStream request (ms); default 2000. */
  requestTimeoutMs?: number;
  /** Wait between reconnect attempts (ms); default 250. The client retries forever. */
  reconnectWaitMs?: number;
  /** Timeout of the first connection (ms); default 3000. */
  connectTimeoutMs?: number;
  /** A NATS credentials file (JWT + nkey seed) or a bare nkey user seed, e.g. mounted from a Secret. */
  credsFile?: string;
  /** TLS: a CA bundle to trust, and a client certificate and key for mutual TLS (file paths). */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  /** The JetStream domain holding the buckets (e.g. a hub reached through a leaf node). */
  domain?: string;
  /** The JetStream API prefix, e.g. where another account's JetStream is imported; not with `domain`. */
  apiPrefix?: string;
  /** Prefix of this client's inboxes: watch deliveries from another account arrive through it. */
  inboxPrefix?: string;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 2000;
const DEFAULT_RECONNECT_WAIT_MS = 250;
const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

class NatsConnectionStatus implements KvConnection {
  connected = true;
  private readonly listeners = new Set<(connected: boolean) => void>();

  onStatus(listener: (connected: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  set(connected: boolean): void {
    if (this.connected === connected) return;
    this.connected = connected;
    for (const l of [...this.listeners]) l(connected);
  }
}

function jetStreamOptions(options: NatsKvOptions): JetStreamOptions {
  if (options.domain !== undefined && options.apiPrefix !== undefined) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      "NATS: set a JetStream domain or an API prefix, not both",
      {
        field: "domain",
      },
    );
  }
  return {
    timeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    ...(options.domain !== undefined ? { domain: options.domain } : {}),
    ...(options.apiPrefix !== undefined ? { apiPrefix: options.apiPrefix } : {}),
  };
}

/** Connects to NATS; fails with StateUnavailable when no server (or no JetStream) answers. */
export async function connectNatsKv(options: NatsKvOptions): Promise<NatsKvStore> {
  const jsOptions = jetStreamOptions(options);
  let nc: NatsConnection;
  try {
    const creds = options.credsFile !== undefined ? await readFile(options.credsFile) : undefined;
    nc = await connect({
      ...(creds ? { authenticator: authenticatorFor(new Uint8Array(creds)) } : {}),
      ...(options.tls ? { tls: { ...options.tls } } : {}),
      ...(options.inboxPrefix !== undefined ? { inboxPrefix: options.inboxPrefix } : {}),
      servers: options.servers,
      name: options.name ?? "kubemoot-scheduler",
      timeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: options.reconnectWaitMs ?? DEFAULT_RECONNECT_WAIT_MS,
      reconnectJitter: 100,
      pingInterval: 5000,
      maxPingOut: 2,
      // Every request would otherwise build two Errors (stack captures) up front, just in case
      // it fails: a measurable share of a claim's CPU. Our errors carry the key and operation.
      noAsyncTraces: true,
    });
  } catch (err) {
    // The URL may carry user:password@ or a token: never in a message (nor its cause's).
    throw stateUnavailable(
      `cannot connect to ${redactUrl(options.servers)}: ${redactSecrets(errorMessage(err))}`,
    );
  }
  try {
    // JetStream answers where the options point (domain, prefix), or the store is of no use.
    // (The clients rewrite the options they are given: each gets its own copy.)
    await jetstreamManager(nc, { ...jsOptions });
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw stateUnavailable(
      `no JetStream at ${redactUrl(options.servers)}: ${redactSecrets(errorMessage(err))}`,
    );
  }
  return new NatsKvStore(nc, jetstream(nc, { ...jsOptions }), options.apiPrefix !== undefined);
}

export class NatsKvStore implements KvStore {
  readonly kind = "nats" as const;
  readonly connection = new NatsConnectionStatus();
  readonly messages: MessageBus;
  private readonly kvm: Kvm;
  private readonly inFlight = new InFlight();
  private closed = false;

  constructor(
    readonly nc: NatsConnection,
    js: JetStreamClient,
    /** Watches use push consumers (behind an API prefix): see NatsBucket. */
    private readonly pushWatches = false,
  ) {
    this.connection.onStatus((up) => {
      if (!up)
        this.inFlight.failAll(
          new KubemootError(ErrorCode.StateUnavailable, "disconnected while the request was in flight"),
        );
    });
    this.kvm = new Kvm(js);
    this.messages = new NatsMessageBus(nc);
    void this.followStatus();
  }

  async bucket(name: string, settings: BucketSettings): Promise<KvBucket> {
    if (!this.connection.connected) throw stateUnavailable(`disconnected; cannot open bucket ${name}`);
    try {
      const kv = await this.kvm.create(name, {
        history: settings.history,
        ...(settings.ttlMs > 0 ? { ttl: settings.ttlMs } : {}),
        maxValueSize: settings.maxValueBytes > 0 ? settings.maxValueBytes : -1,
        replicas: settings.replicas,
        // Reads go to the stream leader: a direct get may answer from a lagging replica.
        allow_direct: false,
      });
      if (!(kv instanceof Bucket))
        throw new KubemootError(ErrorCode.Internal, "the KV client returned an unexpected bucket type");
      return new NatsBucket(
        name,
        settings,
        kv,
        this.inFlight,
        this.connection,
        () => this.nc.flush(),
        this.pushWatches,
      );
    } catch (err) {
      // Least-privilege users (docs/deploy.md): only the operator's may create the buckets.
      const refused = /Permissions Violation for Publish to "([^"]+)"/.exec(errorMessage(err))?.[1];
      if (refused !== undefined) {
        const verb = refused.includes(".STREAM.CREATE.") ? "create" : "open";
        throw stateUnavailable(
          `bucket ${name}: this NATS user may not ${verb} it (${refused}); the operator's user creates the buckets at start`,
          err,
        );
      }
      throw toStateError(err, name, "(bucket)", "read");
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.inFlight.failAll(new KubemootError(ErrorCode.StateUnavailable, "connection closed"));
    await this.nc.close().catch(() => undefined);
  }

  private async followStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === "disconnect" || s.type === "close") this.connection.set(false);
      else if (s.type === "reconnect") this.connection.set(true);
    }
    this.connection.set(false);
  }
}
