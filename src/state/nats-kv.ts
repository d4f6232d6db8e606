// The KV interface on NATS JetStream KV (@nats-io/kv). Revisions are stream sequences; CAS is
// JetStream's expected-last-subject-sequence. While the connection is down every operation
// fails at once with StateUnavailable ("NATS unavailable") instead of waiting for a timeout.

import { readFile } from "node:fs/promises";
import {
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { type KV, Kvm, KvWatchInclude, type KvEntry as NatsKvEntry } from "@nats-io/kv";
import {
  connect,
  createInbox,
  credsAuthenticator,
  headers,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from "@nats-io/transport-node";
import { ErrorCode, KubemootError } from "../errors/index.js";
import type {
  BucketSettings,
  KvBucket,
  KvConnection,
  KvEntry,
  KvStore,
  KvWatch,
  WatchOptions,
} from "./kv.js";
import {
  invalidKey,
  stateConflict,
  stateExists,
  stateUnavailable,
  validKey,
  valueTooLarge,
} from "./kv-errors.js";

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
  /** A NATS credentials file (JWT + nkey seed), e.g. mounted from a Secret. */
  credsFile?: string;
  /** TLS: a CA bundle to trust, and a client certificate and key for mutual TLS (file paths). */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

/** JetStream error codes of a failed expected-last-sequence check. */
const WRONG_LAST_SEQUENCE = new Set([10071, 10164]);
const MESSAGE_TOO_LARGE = 10054;

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

/** Connects to NATS; fails with StateUnavailable when no server answers. */
export async function connectNatsKv(options: NatsKvOptions): Promise<NatsKvStore> {
  let nc: NatsConnection;
  try {
    const creds = options.credsFile !== undefined ? await readFile(options.credsFile) : undefined;
    nc = await connect({
      ...(creds ? { authenticator: credsAuthenticator(new Uint8Array(creds)) } : {}),
      ...(options.tls ? { tls: { ...options.tls } } : {}),
      servers: options.servers,
      name: options.name ?? "kubemoot-scheduler",
      timeout: options.connectTimeoutMs ?? 3000,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: options.reconnectWaitMs ?? 250,
      reconnectJitter: 100,
      pingInterval: 5000,
      maxPingOut: 2,
      // Every request would otherwise build two Errors (stack captures) up front, just in case
      // it fails: a measurable share of a claim's CPU. Our errors carry the key and operation.
      noAsyncTraces: true,
    });
  } catch (err) {
    throw stateUnavailable(`cannot connect to ${String(options.servers)}: ${message(err)}`, err);
  }
  const timeout = options.requestTimeoutMs ?? 2000;
  const jsm = await jetstreamManager(nc, { timeout });
  return new NatsKvStore(nc, jsm, timeout);
}

export class NatsKvStore implements KvStore {
  readonly kind = "nats" as const;
  readonly connection = new NatsConnectionStatus();
  private readonly kvm: Kvm;
  private readonly js: JetStreamClient;
  private readonly requests: Requests;
  private closed = false;

  constructor(
    readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    timeoutMs: number,
  ) {
    this.js = jetstream(nc, { timeout: timeoutMs });
    this.requests = new Requests(nc, this.connection, timeoutMs);
    this.connection.onStatus((up) => {
      if (!up) this.requests.failAll(new Error("disconnected while the request was in flight"));
    });
    this.kvm = new Kvm(this.js);
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
      return new NatsBucket(name, settings, kv, this.requests, this.jsm, this.connection);
    } catch (err) {
      throw toStateError(err, name, "(bucket)", "read");
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.requests.close();
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

/** A JetStream publish acknowledgement: the stored message's sequence (the key's revision). */
interface Ack {
  seq: number;
  duplicate: boolean;
}

interface InFlight {
  resolve: (ack: Ack) => void;
  reject: (err: unknown) => void;
  deadline: number;
}

const ackDecoder = new TextDecoder();

/**
 * The requests of one connection, kept lean because every claim and release is one of them:
 *  - Writes are JetStream publishes whose acknowledgements come back on one subscription of
 *    this client (`<inbox>.<n>`), matched by a counter, with deadlines checked by one sweep:
 *    no request object, timer, or Error per write, as the client's generic request makes.
 *  - Writes issued in one turn of the event loop leave in one socket write: they are handed to
 *    the client together at the end of the turn (setImmediate) instead of one syscall each. A
 *    lone write waits only for its turn to end. Order of issue is kept.
 *  - When the connection drops, every request in flight fails at once (outcome unknown: the
 *    callers treat it so) instead of waiting for its timeout; a write not sent yet fails too.
 */
class Requests {
  private queue: (() => void)[] = [];
  private readonly writes = new Map<string, InFlight>();
  private readonly others = new Set<(err: unknown) => void>();
  private readonly inbox: string;
  private counter = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly nc: NatsConnection,
    private readonly connection: KvConnection,
    private readonly timeoutMs: number,
  ) {
    this.inbox = `${createInbox()}.`;
    // An error without a message (e.g. a permissions violation) leaves the write to its deadline.
    nc.subscribe(`${this.inbox}*`, {
      callback: (_err, msg) => {
        if (msg?.subject) this.onAck(msg);
      },
    });
    this.sweeper = setInterval(() => this.sweep(), Math.min(250, Math.max(10, timeoutMs / 4)));
    this.sweeper.unref();
  }

  /** Publishes to a stream subject and resolves with the acknowledgement. */
  publish(subject: string, data: Uint8Array, hdrs: MsgHdrs | undefined): Promise<Ack> {
    return new Promise((resolve, reject) => {
      const send = () => {
        if (!this.connection.connected) {
          reject(new Error("disconnected before the request was sent"));
          return;
        }
        const token = (this.counter++).toString(36);
        this.writes.set(token, { resolve, reject, deadline: Date.now() + this.timeoutMs });
        try {
          this.nc.publish(subject, data, {
            reply: `${this.inbox}${token}`,
            ...(hdrs !== undefined ? { headers: hdrs } : {}),
          });
        } catch (err) {
          this.writes.delete(token);
          reject(err);
        }
      };
      if (this.queue.push(send) === 1) setImmediate(this.flush);
    });
  }

  /** Any other request: `p`, or a rejection as soon as the connection drops. */
  track<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (err: unknown) => {
        this.others.delete(fail);
        reject(err);
      };
      this.others.add(fail);
      p.then(
        (v) => {
          this.others.delete(fail);
          resolve(v);
        },
        (err: unknown) => fail(err),
      );
    });
  }

  /** Fails every request in flight (the connection dropped). */
  failAll(err: unknown): void {
    const writes = [...this.writes.values()];
    this.writes.clear();
    for (const w of writes) w.reject(err);
    for (const fail of [...this.others]) fail(err);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.failAll(new Error("connection closed"));
  }

  private readonly flush = (): void => {
    const q = this.queue;
    this.queue = [];
    for (const send of q) send();
  };

  private onAck(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length);
    const w = this.writes.get(token);
    if (w === undefined) return; // timed out or failed already
    this.writes.delete(token);
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      w.reject(new Error("no responders: JetStream is not available for this subject"));
      return;
    }
    let ack: {
      seq?: unknown;
      duplicate?: unknown;
      error?: { code?: number; err_code?: number; description?: string };
    };
    try {
      ack = JSON.parse(ackDecoder.decode(msg.data));
    } catch (err) {
      w.reject(err);
      return;
    }
    if (ack.error !== undefined) {
      w.reject(
        new JetStreamApiError({
          code: ack.error.code ?? 0,
          err_code: ack.error.err_code ?? 0,
          description: ack.error.description ?? "JetStream error",
        }),
      );
    } else if (typeof ack.seq !== "number") {
      w.reject(new Error("invalid publish acknowledgement"));
    } else {
      w.resolve({ seq: ack.seq, duplicate: ack.duplicate === true });
    }
  }

  private sweep(): void {
    if (this.writes.size === 0) return;
    const now = Date.now();
    for (const [token, w] of this.writes) {
      if (w.deadline > now) continue;
      this.writes.delete(token);
      w.reject(new Error(`no acknowledgement within ${this.timeoutMs} ms`));
    }
  }
}

type FailureKind = "read" | "create" | "write";

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Maps a client or server error onto the KubemootError callers branch on. */
function toStateError(err: unknown, bucket: string, key: string, kind: FailureKind): Error {
  if (err instanceof JetStreamApiError) {
    if (WRONG_LAST_SEQUENCE.has(err.code)) {
      return kind === "create" ? stateExists(bucket, key, err) : stateConflict(bucket, key, err);
    }
    if (err.code === MESSAGE_TOO_LARGE) return valueTooLarge(bucket, key);
  }
  return stateUnavailable(`${bucket}/${key}: ${message(err)}`, err);
}

/**
 * A copy of a key that shares no memory with its message. The client slices keys out of their
 * subjects, so a key kept for long (a tombstone stays in a copy for the bucket's TTL) would keep
 * the whole subject alive: a heap snapshot after bench memory's 20,000 releases held 21,000
 * subjects (1.8 MB) for their keys.
 */
function ownKey(key: string): string {
  return Buffer.from(key, "utf8").toString("utf8");
}

function toEntry(e: NatsKvEntry): KvEntry {
  return {
    bucket: e.bucket,
    key: ownKey(e.key),
    value: e.value,
    revision: e.revision,
    operation: e.operation,
    createdMs: e.created.getTime(),
  };
}

class NatsBucket implements KvBucket {
  private readonly stream: string;

  constructor(
    readonly name: string,
    readonly settings: BucketSettings,
    private readonly kv: KV,
    private readonly requests: Requests,
    private readonly jsm: JetStreamManager,
    private readonly connection: KvConnection,
  ) {
    this.stream = `KV_${name}`;
  }

  async get(key: string): Promise<KvEntry | null> {
    this.check(key);
    try {
      const e = await this.requests.track(this.kv.get(key));
      return e === null || e.operation !== "PUT" ? null : toEntry(e);
    } catch (err) {
      throw toStateError(err, this.name, key, "read");
    }
  }

  async put(key: string, value: Uint8Array): Promise<number> {
    this.check(key, value);
    try {
      return (await this.requests.publish(this.subject(key), value, undefined)).seq;
    } catch (err) {
      throw toStateError(err, this.name, key, "write");
    }
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    this.check(key, value);
    try {
      return await this.conditional(key, value, 0);
    } catch (err) {
      if (!KubemootError.is(err, ErrorCode.StateConflict)) throw err;
    }
    // The key exists: creatable again only over a tombstone (JetStream KV semantics).
    let last: NatsKvEntry | null;
    try {
      last = await this.requests.track(this.kv.get(key));
    } catch (err) {
      throw toStateError(err, this.name, key, "read");
    }
    if (last === null || last.operation === "PUT") throw stateExists(this.name, key);
    try {
      return await this.conditional(key, value, last.revision);
    } catch (err) {
      throw KubemootError.is(err, ErrorCode.StateConflict) ? stateExists(this.name, key, err) : err;
    }
  }

  async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    this.check(key, value);
    return this.conditional(key, value, revision);
  }

  async delete(key: string, options: { revision?: number } = {}): Promise<number> {
    this.check(key);
    // Published as KV.delete does (ADR-8: an empty message with KV-Operation: DEL), but keeping
    // the acknowledgement, whose sequence is the tombstone's revision.
    const h = headers();
    h.set("KV-Operation", "DEL");
    const rev = options.revision;
    if (rev !== undefined && rev > 0) return this.conditional(key, new Uint8Array(0), rev, h);
    try {
      const ack = await this.requests.publish(this.subject(key), new Uint8Array(0), h);
      return ack.seq;
    } catch (err) {
      throw toStateError(err, this.name, key, "write");
    }
  }

  /**
   * A write that succeeds only if the key's last revision is `revision` (0 = never written).
   * Besides the expected-last-subject-sequence check it carries a message id naming the
   * revision it replaces, `<key>@<revision>`: clustered servers before 2.9.21 check the expected
   * sequence only before proposing, so two concurrent writes on one revision could both pass
   * (nats-server#4320); a message id is staged at proposal, so the second is a duplicate.
   */
  private async conditional(
    key: string,
    value: Uint8Array,
    revision: number,
    h = headers(),
  ): Promise<number> {
    h.set("Nats-Msg-Id", `${key}@${revision}`);
    h.set("Nats-Expected-Last-Subject-Sequence", String(revision));
    let ack: Ack;
    try {
      ack = await this.requests.publish(this.subject(key), value, h);
    } catch (err) {
      throw toStateError(err, this.name, key, "write");
    }
    if (ack.duplicate) throw stateConflict(this.name, key);
    return ack.seq;
  }

  private subject(key: string): string {
    return `$KV.${this.name}.${key}`;
  }

  async keys(prefix = ""): Promise<string[]> {
    this.check();
    // A subject filter narrows the scan when the prefix ends at a token boundary.
    const filter = prefix.endsWith(".") && validKey(prefix.slice(0, -1)) ? `${prefix}>` : ">";
    try {
      const out: string[] = [];
      for await (const k of await this.kv.keys(filter)) if (k.startsWith(prefix)) out.push(k);
      return out;
    } catch (err) {
      throw toStateError(err, this.name, prefix, "read");
    }
  }

  async watch(options: WatchOptions): Promise<KvWatch> {
    this.check();
    let it: Awaited<ReturnType<KV["watch"]>>;
    try {
      const updatesOnly = options.include !== "initial";
      // "Updates" means every write after this call: the client's deliver-new consumer starts
      // wherever the server is once it gets created, which can be after a write acknowledged
      // before watch() resolved. Starting just past the head read now makes it exact.
      const from = updatesOnly ? (await this.headRevision()) + 1 : 0;
      it = await this.kv.watch({
        key: options.key ?? ">",
        include: updatesOnly ? KvWatchInclude.UpdatesOnly : KvWatchInclude.LastValue,
        ...(updatesOnly ? { resumeFromRevision: from } : {}),
      });
    } catch (err) {
      throw toStateError(err, this.name, options.key ?? ">", "read");
    }
    async function* entries(): AsyncGenerator<KvEntry> {
      for await (const e of it) yield toEntry(e);
    }
    // One underlying iterator: every iteration of the watch continues where the last left off.
    const shared = entries();
    return {
      stop: () => it.stop(),
      [Symbol.asyncIterator]: () => shared,
    };
  }

  async headRevision(): Promise<number> {
    this.check();
    try {
      const info = await this.requests.track(this.jsm.streams.info(this.stream));
      return info.state.messages === 0 ? 0 : info.state.last_seq;
    } catch (err) {
      throw toStateError(err, this.name, "(head)", "read");
    }
  }

  private check(key?: string, value?: Uint8Array): void {
    if (!this.connection.connected) throw stateUnavailable(`disconnected from the server (${this.name})`);
    if (key !== undefined && !validKey(key)) throw invalidKey(this.name, key);
    const max = this.settings.maxValueBytes;
    if (value !== undefined && max > 0 && value.byteLength > max) {
      throw valueTooLarge(this.name, key ?? "", value.byteLength, max);
    }
  }
}
