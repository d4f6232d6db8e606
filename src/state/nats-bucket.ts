// One bucket on NATS JetStream KV (docs/rules/state.md §3–§4). Reads, scans, watches and plain
// puts are @nats-io/kv's. Writes that carry a condition or must return their revision (the KV
// client's delete returns none) are JetStream publishes with expectations, sent to the subject
// the KV client names for the key, so JetStream domains and API prefixes apply to them as to
// every other call.
import {
  type ConsumerMessages,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamPublishOptions,
  type PubAck,
} from "@nats-io/jetstream";
import { type Bucket, KvWatchInclude, type KvEntry as NatsKvEntry } from "@nats-io/kv";
import { headers } from "@nats-io/transport-node";
import { ErrorCode, KubemootError } from "../errors/index.js";
import type { InFlight } from "./in-flight.js";
import type { BucketSettings, KvBucket, KvConnection, KvEntry, KvWatch, WatchOptions } from "./kv.js";
import {
  invalidKey,
  stateConflict,
  stateExists,
  stateUnavailable,
  validKey,
  valueTooLarge,
} from "./kv-errors.js";

/** JetStream error codes of a failed expected-last-subject-sequence check. */
const WRONG_LAST_SEQUENCE = new Set<number>([
  JetStreamApiCodes.StreamWrongLastSequence,
  JetStreamApiCodes.StreamWrongLastSequenceUnknown,
]);
/** JetStream's "message size exceeds maximum allowed". */
const MESSAGE_TOO_LARGE = 10054;
/** How a KV tombstone is marked (NATS ADR-8). */
const KV_OPERATION = "KV-Operation";
/** Messages a watch asks for at a time. */
const WATCH_BATCH = 256;

type FailureKind = "read" | "create" | "write";

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Maps a client or server error onto the KubemootError callers branch on. */
export function toStateError(err: unknown, bucket: string, key: string, kind: FailureKind): KubemootError {
  if (err instanceof JetStreamApiError) {
    if (WRONG_LAST_SEQUENCE.has(err.code)) {
      return kind === "create" ? stateExists(bucket, key, err) : stateConflict(bucket, key, err);
    }
    if (err.code === MESSAGE_TOO_LARGE) return valueTooLarge(bucket, key);
  }
  return stateUnavailable(`${bucket}/${key}: ${errorMessage(err)}`, err);
}

/**
 * A copy of a key that shares no memory with its message. The client slices keys out of their
 * subjects, so a key kept for long (a tombstone stays in a copy for the bucket's TTL) would
 * keep its whole subject alive (docs/rules/state.md §4).
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

export class NatsBucket implements KvBucket {
  constructor(
    readonly name: string,
    readonly settings: BucketSettings,
    private readonly kv: Bucket,
    private readonly inFlight: InFlight,
    private readonly connection: KvConnection,
    /** A round trip to the server: everything sent before it has been processed there. */
    private readonly flush: () => Promise<void>,
    /**
     * Watch with the KV client's push consumers instead of ordered pull consumers: behind an
     * API prefix (an account import), where a pull's stream of replies does not cross the
     * service import but deliveries to an exported inbox stream do (docs/rules/state.md §4).
     */
    private readonly pushWatches = false,
  ) {}

  async get(key: string): Promise<KvEntry | null> {
    this.check(key);
    try {
      const e = await this.inFlight.track(this.kv.get(key));
      return e === null || e.operation !== "PUT" ? null : toEntry(e);
    } catch (err) {
      throw toStateError(err, this.name, key, "read");
    }
  }

  async put(key: string, value: Uint8Array): Promise<number> {
    this.check(key, value);
    try {
      return await this.inFlight.track(this.kv.put(key, value));
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
      last = await this.inFlight.track(this.kv.get(key));
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
    // A tombstone as the KV client writes it, but keeping the acknowledgement: its sequence is
    // the tombstone's revision.
    const h = headers();
    h.set(KV_OPERATION, "DEL");
    const rev = options.revision;
    if (rev !== undefined && rev > 0) return this.conditional(key, new Uint8Array(0), rev, h);
    try {
      return (await this.publish(key, new Uint8Array(0), { headers: h })).seq;
    } catch (err) {
      throw toStateError(err, this.name, key, "write");
    }
  }

  /**
   * A write that succeeds only if the key's last revision is `revision` (0 = never written).
   * It also carries a message id naming the revision it replaces, `<key>@<revision>`: clustered
   * servers before 2.9.21 check the expected sequence only before proposing, so two concurrent
   * writes on one revision could both pass (nats-server#4320); the server deduplicates message
   * ids at proposal, so the second is acknowledged as a duplicate and fails here.
   */
  private async conditional(
    key: string,
    value: Uint8Array,
    revision: number,
    h = headers(),
  ): Promise<number> {
    let ack: PubAck;
    try {
      ack = await this.publish(key, value, {
        headers: h,
        msgID: `${key}@${revision}`,
        expect: { lastSubjectSequence: revision },
      });
    } catch (err) {
      throw toStateError(err, this.name, key, "write");
    }
    if (ack.duplicate) throw stateConflict(this.name, key);
    return ack.seq;
  }

  /** Publishes to the key's subject as the KV client writes it (with any domain or API prefix). */
  private publish(
    key: string,
    value: Uint8Array,
    options: Partial<JetStreamPublishOptions>,
  ): Promise<PubAck> {
    const subject = this.kv.subjectForKey(this.kv.encodeKey(key), true);
    return this.inFlight.track(this.kv.js.publish(subject, value, options));
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
    if (this.pushWatches) return this.pushWatch(options);
    const filter = options.key ?? ">";
    let messages: ConsumerMessages;
    try {
      const updatesOnly = options.include !== "initial";
      const from = await this.startRevision(updatesOnly);
      // An ordered pull consumer: nothing is sent before we ask for it, so no delivery can slip
      // past between creating the consumer and iterating it (docs/rules/state.md §4), and a
      // consumer lost on the server is recreated at the next sequence by the client.
      const consumer = await this.inFlight.track(
        this.kv.js.consumers.get(this.kv.stream, {
          filter_subjects: this.kv.fullKeyName(filter),
          ...(updatesOnly
            ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from }
            : { deliver_policy: DeliverPolicy.LastPerSubject }),
        }),
      );
      messages = await this.inFlight.track(consumer.consume({ max_messages: WATCH_BATCH }));
    } catch (err) {
      throw toStateError(err, this.name, filter, "read");
    }
    // Pull at once, and let the server hold that request before returning: a bucket keeps one
    // revision per key, so a write made while no pull is outstanding can be replaced before
    // it is delivered, and then a watch would skip it (only its successor would arrive).
    const iter = messages[Symbol.asyncIterator]();
    const first = iter.next();
    first.catch(() => undefined); // seen by the first iteration
    try {
      await this.inFlight.track(this.flush());
    } catch (err) {
      messages.stop();
      throw toStateError(err, this.name, filter, "read");
    }
    const kv = this.kv;
    async function* entries(): AsyncGenerator<KvEntry> {
      for (let r = await first; !r.done; r = await iter.next())
        yield toEntry(kv.jmToWatchEntry(r.value, false));
    }
    // One underlying iterator: every iteration of the watch continues where the last left off.
    const shared = entries();
    return {
      stop: () => {
        messages.stop();
      },
      [Symbol.asyncIterator]: () => shared,
    };
  }

  /**
   * Where a watch starts. "Updates" means every write after the call: just past the head read
   * now, wherever the server is once the consumer exists. 0: from the last value of each key.
   */
  private async startRevision(updatesOnly: boolean): Promise<number> {
    return updatesOnly ? (await this.headRevision()) + 1 : 0;
  }

  /** The KV client's own watch (a push consumer): see `pushWatches`. */
  private async pushWatch(options: WatchOptions): Promise<KvWatch> {
    let it: Awaited<ReturnType<Bucket["watch"]>>;
    try {
      const updatesOnly = options.include !== "initial";
      const from = await this.startRevision(updatesOnly);
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
    const shared = entries();
    return { stop: () => it.stop(), [Symbol.asyncIterator]: () => shared };
  }

  async headRevision(filter = ">"): Promise<number> {
    this.check();
    try {
      if (filter === ">") {
        const { state } = (await this.inFlight.track(this.kv.status())).streamInfo;
        return state.messages === 0 ? 0 : state.last_seq;
      }
      return (await this.lastMessage(filter))?.seq ?? 0;
    } catch (err) {
      throw toStateError(err, this.name, `(head ${filter})`, "read");
    }
  }

  async last(filter: string): Promise<KvEntry | null> {
    this.check();
    try {
      const m = await this.lastMessage(filter);
      return m === null ? null : toEntry(this.kv.smToEntry(m));
    } catch (err) {
      throw toStateError(err, this.name, `(last ${filter})`, "read");
    }
  }

  /**
   * The newest message on the filter's subjects (a wildcard `last_by_subj`, answered by the
   * stream leader): what a watch of that filter must reach.
   */
  private lastMessage(filter: string) {
    return this.inFlight.track(
      this.kv.jsm.streams.getMessage(this.kv.stream, { last_by_subj: this.kv.fullKeyName(filter) }),
    );
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
