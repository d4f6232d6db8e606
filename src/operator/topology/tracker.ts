// One TopologySource's life over time: read through its arm, validate, keep the last accepted
// snapshot, and say what the status is at a given time. A snapshot is accepted or rejected
// whole by the injected validator; a rejected one never replaces the accepted one, and neither
// does a failed read. The accepted snapshot stays in force until `maxStaleness` has passed
// since the last read that produced an accepted snapshot: at exactly `acceptedAt +
// maxStaleness` it is out of force and the source is not Ready (reason Stale). A rejected
// snapshot does not refresh freshness, as it says nothing current we may use.
//
// Time is always passed in; the only I/O is the arm's read (see ./reader.ts).

import { formatDuration } from "../../duration/index.js";
import { KubemootError } from "../../errors/index.js";
import type { TopologySourceArm } from "./arm.js";
import { parseSnapshotText } from "./document.js";
import { armReader, type SnapshotReader, type SnapshotReaderDeps } from "./reader.js";

/**
 * The validator's answer for one parsed snapshot document. `nodes` is whatever the validator
 * produces for an accepted snapshot (e.g. the labels per node); the tracker only keeps it.
 */
export type SnapshotVerdict<N> =
  | { ok: true; revision: string; nodes: N }
  | { ok: false; reason: string; message: string };

/**
 * Validates one parsed document (YAML/JSON already parsed). The operator binds it to the
 * source and the current Nodes: `(doc) => validateSnapshot(source, doc, nodes())`.
 */
export type SnapshotValidator<N> = (doc: unknown) => SnapshotVerdict<N>;

/** For a `nodeLabels` source: whether the Nodes' labels form a tree (else not Ready). */
export type NodeLabelsCheck = () => { ok: true } | { ok: false; reason: string; message: string };

export const TopologySourceReason = {
  /** The latest read gave a valid snapshot, now in force (nodeLabels: the labels form a tree). */
  Accepted: "Accepted",
  /** Nothing read yet. */
  Pending: "Pending",
  /** The latest read failed (unreachable, HTTP error, missing ConfigMap or key, …). */
  ReadFailed: "ReadFailed",
  /** The latest read gave a document that was rejected whole. */
  InvalidSnapshot: "InvalidSnapshot",
  /** No accepted snapshot for `maxStaleness`: the last one is out of force. */
  Stale: "Stale",
} as const;

export interface TopologySourceStatus {
  /** An accepted snapshot is in force (nodeLabels: the Nodes' labels form a tree). */
  ready: boolean;
  /** The latest document read was valid (a failed read keeps the previous answer). */
  valid: boolean;
  reason: string;
  message: string;
  lastSuccessfulRevision?: string;
  /** ISO time of the read that produced the accepted snapshot. */
  lastSuccessfulTime?: string;
  /** Nodes the source's nodeSelector selects, as counted by the operator. */
  selectedNodes: number;
}

/** The accepted snapshot in force. */
export interface AcceptedSnapshot<N> {
  revision: string;
  nodes: N;
  /** ms since the epoch of the read that produced it. */
  acceptedAt: number;
}

export interface TopologySourceTrackerOptions<N> {
  /** The TopologySource's name, for messages. */
  name: string;
  arm: TopologySourceArm;
  validate: SnapshotValidator<N>;
  /** How many Nodes the nodeSelector selects now (the operator's Node cache). */
  selectedNodes: () => number;
  /** Where ConfigMaps and Secrets come from (for the configMap and webhook arms). */
  deps?: SnapshotReaderDeps;
  /** Replaces the arm's reader (tests, dry runs). */
  read?: SnapshotReader;
  /** The tree check of a nodeLabels source; absent means always Ready. */
  checkNodeLabels?: NodeLabelsCheck;
}

type Outcome =
  | { kind: "accepted"; at: number }
  | { kind: "invalid"; at: number; message: string }
  | { kind: "readFailed"; at: number; message: string };

export class TopologySourceTracker<N = unknown> {
  readonly name: string;
  readonly arm: TopologySourceArm;
  private readonly o: TopologySourceTrackerOptions<N>;
  private readonly read: SnapshotReader | undefined;
  private accepted: AcceptedSnapshot<N> | undefined;
  private last: Outcome | undefined;
  private lastDocumentValid = false;
  private inFlight: Promise<TopologySourceStatus> | undefined;

  constructor(o: TopologySourceTrackerOptions<N>) {
    this.o = o;
    this.name = o.name;
    this.arm = o.arm;
    this.read =
      o.arm.kind === "nodeLabels"
        ? undefined
        : (o.read ?? armReader(o.arm, o.deps ?? {}, `TopologySource ${o.name}: spec.${o.arm.kind}`));
  }

  /** How long an accepted snapshot stays in force without a new one; undefined for nodeLabels. */
  get maxStalenessMs(): number | undefined {
    return this.arm.kind === "nodeLabels" ? undefined : this.arm.maxStalenessMs;
  }

  /**
   * Reads through the arm, validates, records the outcome at `now` (the start of the read, so
   * freshness is never overstated) and returns the status at `now`. A call while a read is in
   * flight joins that read instead of starting a second one. nodeLabels: no read.
   */
  poll(now: Date, signal?: AbortSignal): Promise<TopologySourceStatus> {
    if (this.inFlight) return this.inFlight;
    const read = this.read;
    if (read === undefined) return Promise.resolve(this.status(now));
    const run = async () => {
      let text: string;
      try {
        text = await read(signal);
      } catch (err) {
        // Cancelled by our owner (the poller stopping): not a failure of the source.
        if (signal?.aborted) return this.status(now);
        this.recordReadFailure(errorText(err), now);
        return this.status(now);
      }
      this.recordDocument(text, now);
      return this.status(now);
    };
    this.inFlight = run().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Records a document read at `now`: parsed, validated, accepted or rejected whole. */
  recordDocument(text: string, now: Date): SnapshotVerdict<N> {
    const at = now.getTime();
    const parsed = parseSnapshotText(text);
    let verdict: SnapshotVerdict<N>;
    if (!parsed.ok) verdict = { ok: false, reason: "UnparsableDocument", message: parsed.message };
    else {
      try {
        verdict = this.o.validate(parsed.doc);
      } catch (err) {
        // A throwing validator is a bug; the snapshot still must not be used.
        verdict = { ok: false, reason: "ValidatorError", message: errorText(err) };
      }
    }
    this.lastDocumentValid = verdict.ok;
    if (verdict.ok) {
      this.accepted = { revision: verdict.revision, nodes: verdict.nodes, acceptedAt: at };
      this.last = { kind: "accepted", at };
    } else {
      this.last = { kind: "invalid", at, message: `${verdict.reason}: ${verdict.message}` };
    }
    return verdict;
  }

  /** Records a failed read at `now`; the accepted snapshot (if any) is kept. */
  recordReadFailure(message: string, now: Date): void {
    this.last = { kind: "readFailed", at: now.getTime(), message };
  }

  /** The accepted snapshot if it is in force at `now`. */
  snapshot(now: Date): AcceptedSnapshot<N> | undefined {
    const a = this.accepted;
    if (a === undefined || this.arm.kind === "nodeLabels") return undefined;
    return now.getTime() - a.acceptedAt < this.arm.maxStalenessMs ? a : undefined;
  }

  /** When the accepted snapshot goes out of force (ms since the epoch), if there is one. */
  staleAt(): number | undefined {
    if (this.accepted === undefined || this.arm.kind === "nodeLabels") return undefined;
    return this.accepted.acceptedAt + this.arm.maxStalenessMs;
  }

  status(now: Date): TopologySourceStatus {
    const selectedNodes = this.o.selectedNodes();
    if (this.arm.kind === "nodeLabels") {
      const check = this.o.checkNodeLabels?.() ?? { ok: true as const };
      return check.ok
        ? {
            ready: true,
            valid: true,
            reason: "Accepted",
            message: "reading the Nodes' labels",
            selectedNodes,
          }
        : { ready: false, valid: false, reason: check.reason, message: check.message, selectedNodes };
    }
    const R = TopologySourceReason;
    const a = this.accepted;
    const last = this.last;
    const base = {
      valid: this.lastDocumentValid,
      selectedNodes,
      ...(a
        ? { lastSuccessfulRevision: a.revision, lastSuccessfulTime: new Date(a.acceptedAt).toISOString() }
        : {}),
    };
    if (last === undefined) {
      return { ...base, ready: false, reason: R.Pending, message: "no snapshot read yet" };
    }
    const detail = last.kind === "accepted" ? "" : last.message;
    if (a === undefined) {
      return last.kind === "invalid"
        ? { ...base, ready: false, reason: R.InvalidSnapshot, message: `snapshot rejected: ${detail}` }
        : { ...base, ready: false, reason: R.ReadFailed, message: `read failed: ${detail}` };
    }
    const staleAt = a.acceptedAt + this.arm.maxStalenessMs;
    const maxStaleness = formatDuration(this.arm.maxStalenessMs);
    if (now.getTime() >= staleAt) {
      const why = last.kind === "accepted" ? "" : ` (latest: ${detail})`;
      return {
        ...base,
        ready: false,
        reason: R.Stale,
        message: `revision ${a.revision} is out of force: no snapshot accepted within maxStaleness ${maxStaleness}${why}`,
      };
    }
    const until = `revision ${a.revision} stays in force until ${new Date(staleAt).toISOString()}`;
    if (last.kind === "accepted") {
      return { ...base, ready: true, reason: R.Accepted, message: `revision ${a.revision} accepted` };
    }
    if (last.kind === "invalid") {
      return {
        ...base,
        ready: true,
        reason: R.InvalidSnapshot,
        message: `snapshot rejected: ${detail}; ${until}`,
      };
    }
    return { ...base, ready: true, reason: R.ReadFailed, message: `read failed: ${detail}; ${until}` };
  }
}

function errorText(err: unknown): string {
  if (KubemootError.is(err)) return err.message;
  return err instanceof Error ? err.message : String(err);
}
