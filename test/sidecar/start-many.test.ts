// Sidecars of a large crew started together against a tickets bucket with many live keys
// (issue 29; docs/deploy.md "Start-up and readiness"): their first snapshots compete for two
// cores, and one that misses its deadline (docs/rules/state.md §10) is retried with backoff
// instead of ending the process. Every sidecar becomes ready, none exits.
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStateStore, PROVIDER_TICKETS_BUCKET } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * Live keys in the tickets bucket, over this many providers; sidecars started at once. On two
 * cores, 10,000 keys make most first snapshots miss their 2 s deadline (with 5,000, how many
 * miss it depends on the machine's load), and the retries still end within about 15 s.
 */
const KEYS = 10_000;
const PROVIDERS = 50;
const SIDECARS = 8;

let nats: NatsServer;
const started: SidecarProcess[] = [];

/**
 * A ticket as Kubemoot's layout keys it (`<provider>__<ticketId>`, docs/rules/state.md §2.2) and
 * as the sidecars write its value (src/state/ticket-codec.ts), live for the test's length.
 */
function ticket(i: number): { key: string; value: string } {
  const provider = `gpu-${String(i % PROVIDERS).padStart(2, "0")}`;
  const ticketId = `${i.toString(16).padStart(8, "0")}-8d4e-4f6a-9b1c-2d3e4f5a6b7c`;
  const now = Date.now();
  const value = JSON.stringify({
    ticketId,
    provider,
    modelFootprintMiB: 9_310,
    kvCacheFootprintMiB: 1_024,
    holderId: `crew/agent-${i % 400}/${1000 + (i % 97)}`,
    claimedAt: new Date(now).toISOString(),
    modelName: "qwen3:14b",
    evicts: {},
    expiresAt: new Date(now + 600_000).toISOString(),
  });
  return { key: `${provider}__${ticketId}`, value };
}

beforeAll(async () => {
  nats = await NatsServer.start();
  // The buckets as the operator creates them, then the tickets written by a plain KV client.
  await (await openStateStore(nats.url)).close();
  const nc = await connect({ servers: nats.url });
  const tickets = await new Kvm(nc).open(PROVIDER_TICKETS_BUCKET);
  const enc = new TextEncoder();
  for (let i = 0; i < KEYS; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, KEYS - i) }, (_, j) => {
        const t = ticket(i + j);
        return tickets.put(t.key, enc.encode(t.value));
      }),
    );
  }
  expect((await tickets.status()).values).toBe(KEYS);
  await nc.close();
});

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await nats?.dispose();
});

describe(`${SIDECARS} sidecars started at once against ${KEYS} live tickets`, () => {
  it("all become ready and none exits", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: SIDECARS }, (_, i) =>
        startSidecarProcess(
          ["--nats", nats.url, "--agent", `crew/agent-${i}`, "--proxy-listen", "127.0.0.1:0"],
          // Kubemoot's key layout: every sidecar follows every provider's keys, all of them.
          { KUBEMOOT_KEY_LAYOUT: "kubemoot" },
          { timeoutMs: 25_000 },
        ),
      ),
    );
    for (const r of results) if (r.status === "fulfilled") started.push(r.value);
    const failures = results.flatMap((r) =>
      r.status === "rejected" ? [String(r.reason).slice(0, 400)] : [],
    );
    expect(failures).toEqual([]);

    for (const s of started) {
      await waitUntil(
        async () => (await fetch(`${s.apiUrl}/readyz`)).status === 200,
        5_000,
        `sidecar ${s.apiAddress} ready`,
      );
      expect(s.proc.exitCode).toBeNull();
    }
    // Failed attempts of each (the machine decides how many; none may have given up).
    const failed = started.map((s) => (s.output().match(/shared state not open yet/g) ?? []).length);
    console.log(`failed attempts before the store opened, per sidecar: ${failed.join(", ")}`);
    const codes = await Promise.all(started.map((s) => s.stop()));
    expect(codes).toEqual(started.map(() => 0));
  });
});
