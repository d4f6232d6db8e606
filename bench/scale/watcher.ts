// A put-to-copy watcher process for `bench scale` (docs/benchmarks.md "scale"): connects to
// NATS as a sidecar does, follows the given tickets-bucket filters with the copies' own watch
// (one filtered ordered consumer per filter, src/state), and measures for every PUT the time
// from the writer's `sentAt` (epoch ms, sub-millisecond: performance.timeOrigin + now, one
// clock on one machine) to its delivery here. Prints "ready" once its watches run; on "stop"
// (stdin) prints its latencies (ms) as one JSON line and exits.
// Usage: node dist/bench/scale/watcher.js <nats-url> <filter>...
import { connectNatsKv } from "../../src/state/index.js";
import { wall } from "./fleet.js";

const [url, ...filters] = process.argv.slice(2);
const dec = new TextDecoder();

async function main(): Promise<void> {
  const kv = await connectNatsKv({ servers: url! });
  const bucket = await kv.bucket("kubemoot_provider_tickets", {
    history: 1,
    ttlMs: 600_000,
    maxValueBytes: 4096,
    replicas: 1,
  });
  const lat: number[] = [];
  const watches = await Promise.all(filters.map((key) => bucket.watch({ include: "updates", key })));
  const loops = watches.map(async (w) => {
    for await (const e of w) {
      if (e.operation !== "PUT") continue;
      const sentAt = (JSON.parse(dec.decode(e.value)) as { sentAt?: number }).sentAt;
      if (typeof sentAt === "number") lat.push(wall() - sentAt);
    }
  });
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => {
    process.stdin.on("data", (d) => {
      if (String(d).includes("stop")) resolve();
    });
  });
  for (const w of watches) w.stop();
  await Promise.all(loops);
  process.stdout.write(`${JSON.stringify({ lat: lat.map((x) => Math.round(x * 100) / 100) })}\n`);
  await kv.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
