// Opening the shared state at start with retries (docs/deploy.md "Start-up and readiness"):
// the backoff's bounds, one redacted warning per failed attempt, an abort that ends the
// retries at once, and configuration errors that are never retried.
import net from "node:net";
import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../src/errors/index.js";
import type { Logger } from "../src/log/index.js";
import { MemoryKvStore } from "../src/state/index.js";
import {
  OPEN_RETRY_MAX_MS,
  OPEN_RETRY_MIN_MS,
  OpeningConnection,
  openRetryDelayMs,
  openStateWithRetry,
} from "./open-state.js";

/** A loopback port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function recordingLogger(): Logger & { warnings: Record<string, unknown>[] } {
  const warnings: Record<string, unknown>[] = [];
  const noop = () => undefined;
  return { debug: noop, info: noop, error: noop, warn: (obj) => warnings.push({ ...obj }), warnings };
}

describe("openRetryDelayMs", () => {
  it("doubles from 250 ms up to 5 s, with up to half taken off at random", () => {
    const low = [1, 2, 3, 4, 5, 6, 7, 10].map((n) => openRetryDelayMs(n, () => 0));
    const high = [1, 2, 3, 4, 5, 6, 7, 10].map((n) => openRetryDelayMs(n, () => 1));
    expect(high).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    expect(low).toEqual(high.map((h) => h / 2));
    expect(OPEN_RETRY_MIN_MS).toBe(250);
    expect(OPEN_RETRY_MAX_MS).toBe(5000);
  });
});

describe("openStateWithRetry", () => {
  it("warns once per refused attempt, credentials redacted, until aborted", async () => {
    const port = await closedPort();
    const logger = recordingLogger();
    const stop = new AbortController();
    const opening = openStateWithRetry(
      [`nats://user:s3cret@127.0.0.1:${port}`],
      {},
      {
        logger,
        signal: stop.signal,
        delayMs: () => 20,
      },
    );
    while (logger.warnings.length < 3) await new Promise((r) => setTimeout(r, 10));
    const reason = new Error("stopped");
    stop.abort(reason);
    await expect(opening).rejects.toBe(reason);
    const attempts = logger.warnings.map((w) => w.attempt);
    expect(attempts.slice(0, 3)).toEqual([1, 2, 3]);
    expect(logger.warnings[0]).toMatchObject({
      nats: `nats://***@127.0.0.1:${port}`,
      retryInMs: 20,
      reason: expect.stringContaining("connection refused"),
    });
    expect(JSON.stringify(logger.warnings)).not.toContain("s3cret");
  });

  it("does not retry a configuration error", async () => {
    const logger = recordingLogger();
    const err = await openStateWithRetry(
      ["nats://127.0.0.1:1"],
      { nats: { domain: "hub", apiPrefix: "fromA" } },
      { logger, delayMs: () => 1 },
    ).catch((e: unknown) => e);
    expect(KubemootError.is(err, ErrorCode.InvalidConfig)).toBe(true);
    expect(logger.warnings).toEqual([]);
  });

  it("opens the embedded store, and a store the caller owns, at once", async () => {
    const logger = recordingLogger();
    const memory = await openStateWithRetry("memory", {}, { logger });
    expect(memory.state.kind).toBe("memory");
    await memory.close();
    const kv = new MemoryKvStore();
    const shared = await openStateWithRetry(kv, {}, { logger });
    expect(shared.state.kv).toBe(kv);
    await shared.close();
    expect(logger.warnings).toEqual([]);
  });
});

describe("OpeningConnection", () => {
  it("is down until attached, then follows the store's connection", () => {
    const gate = new OpeningConnection();
    const seen: boolean[] = [];
    gate.onStatus((up) => seen.push(up));
    expect(gate.connected).toBe(false);
    let listener: (up: boolean) => void = () => undefined;
    const inner = {
      connected: true,
      onStatus: (l: (up: boolean) => void) => {
        listener = l;
        return () => undefined;
      },
    };
    gate.attach(inner);
    expect(gate.connected).toBe(true);
    inner.connected = false;
    listener(false);
    expect(gate.connected).toBe(false);
    expect(seen).toEqual([true, false]);
  });
});
