// Opening the sidecar's shared state at start (docs/deploy.md "Start-up and readiness"): a
// NATS server that refuses connections, a JetStream that cannot serve yet, or a first snapshot
// that misses its deadline (docs/rules/state.md §10–§11) is retried with capped exponential
// backoff and jitter, one warning per failed attempt, until the store opens or the start is
// aborted (SIGTERM). Only configuration errors end the start. The connection is made once and
// kept across attempts; each attempt opens the buckets and waits for their snapshots afresh.
import { ErrorCode, KubemootError } from "../src/errors/index.js";
import { type Logger, redactSecrets, redactUrl } from "../src/log/index.js";
import {
  connectNatsKv,
  type KvConnection,
  type KvStore,
  openStateStore,
  type StateStore,
  type StateStoreOptions,
} from "../src/state/index.js";

/** The first snapshot's deadline at the first attempt and at most (ms). */
const FIRST_SNAPSHOT_MIN_MS = 2000;
const FIRST_SNAPSHOT_MAX_MS = 30_000;

/** First and longest wait between two attempts (ms), before jitter. */
export const OPEN_RETRY_MIN_MS = 250;
export const OPEN_RETRY_MAX_MS = 5_000;

/**
 * The wait after failed attempt `attempt` (1, 2, …): 250 ms doubling up to 5 s, of which a random
 * half is taken off ("equal jitter"), so sidecars started together drift apart.
 */
export function openRetryDelayMs(attempt: number, random: () => number = Math.random): number {
  const nominal = Math.min(OPEN_RETRY_MAX_MS, OPEN_RETRY_MIN_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(nominal / 2 + (random() * nominal) / 2);
}

export interface OpenStateRetry {
  logger: Logger;
  /** Aborts the retries (and an attempt in flight): the open then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The wait after failed attempt n (ms); default openRetryDelayMs. */
  delayMs?: (attempt: number) => number;
}

export interface OpenedState {
  readonly state: StateStore;
  /** Closes the store and the connection this open made. */
  close(): Promise<void>;
}

/**
 * Opens the shared state on `target`. NATS URLs are retried until the store opens; the embedded
 * store and a KvStore given by the caller (standalone's, which it opened itself) open once.
 */
export async function openStateWithRetry(
  target: "memory" | string[] | KvStore,
  options: StateStoreOptions,
  retry: OpenStateRetry,
): Promise<OpenedState> {
  if (!Array.isArray(target)) {
    const state = await openStateStore(target, options);
    return { state, close: () => state.close() };
  }
  const { logger, signal } = retry;
  const delayMs = retry.delayMs ?? openRetryDelayMs;
  const servers = redactUrl(target);
  let kv: KvStore | undefined;
  const giveUp = async (err: unknown): Promise<never> => {
    await kv?.close();
    throw err;
  };
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) return giveUp(signal.reason);
    try {
      kv ??= await untilAborted(connectNatsKv({ ...options.nats, servers: target }), signal, (late) =>
        late.close(),
      );
      const open = kv;
      // A first snapshot that misses its deadline gets a longer one next time (2 s doubling to
      // 30 s): a busy server may need it, and the copy keeps no state between attempts.
      const firstSnapshotTimeoutMs = Math.min(
        FIRST_SNAPSHOT_MAX_MS,
        (options.catchUpTimeoutMs ?? FIRST_SNAPSHOT_MIN_MS) * 2 ** (attempt - 1),
      );
      const state = await untilAborted(
        openStateStore(open, { ...options, firstSnapshotTimeoutMs }),
        signal,
        (late) => late.close(),
      );
      if (attempt > 1) logger.info({ attempt, nats: servers }, "shared state open");
      return {
        state,
        close: async () => {
          await state.close();
          await open.close();
        },
      };
    } catch (err) {
      if (signal?.aborted) return giveUp(signal.reason);
      // Anything but an unavailable state is the configuration's fault: retrying cannot help.
      if (!KubemootError.is(err, ErrorCode.StateUnavailable)) return giveUp(err);
      const wait = delayMs(attempt);
      logger.warn(
        { attempt, retryInMs: wait, nats: servers, reason: redactSecrets(err.message) },
        "shared state not open yet: not ready, retrying",
      );
      await sleep(wait, signal);
    }
  }
}

/**
 * `work`, or the signal's reason as soon as it aborts; a result that comes after the abort is
 * handed to `discard` (closed), since no one will use it.
 */
function untilAborted<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  discard: (late: T) => Promise<void>,
): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.then(discard, () => undefined).catch(() => undefined);
      reject(signal.reason);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** Waits `ms`, or less when `signal` aborts (the caller then sees the abort). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * The shared state's connection as the API's readiness sees it while the store opens: down
 * until `attach` hands it the store's connection, whose changes it then passes on.
 */
export class OpeningConnection {
  private inner: KvConnection | undefined;
  private readonly listeners = new Set<(connected: boolean) => void>();

  get connected(): boolean {
    return this.inner?.connected ?? false;
  }

  onStatus(listener: (connected: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** From now on, readiness follows `connection`. */
  attach(connection: KvConnection): void {
    if (this.inner !== undefined) return;
    this.inner = connection;
    connection.onStatus((up) => this.emit(up));
    this.emit(connection.connected);
  }

  private emit(connected: boolean): void {
    for (const l of [...this.listeners]) l(connected);
  }
}
