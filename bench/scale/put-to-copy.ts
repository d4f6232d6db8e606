// `bench scale`'s put-to-copy latency (docs/benchmarks.md "scale"): watchers follow 4 providers
// with the copies' own watches (one filtered ordered consumer per provider, src/state) while 420
// writes/s go to those providers, spread evenly (as many agents' calls arrive) or in bursts of 42
// every 100 ms (the queueing tail of a burst). The watchers run in the bench's process (sharing its one thread
// with the writer) or each in a process of its own, as sidecars do (./watcher.ts).
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { type KvBucket, keyLayout } from "../../src/state/index.js";
import { percentile, repoRoot } from "../lib/report.js";
import { modelOf, PER_SIDECAR, providerName, round, ticketValue, wall } from "./fleet.js";

const WRITES_PER_S = 420;

export interface PutToCopy {
  p50_ms: number;
  p99_ms: number;
  samples: number;
}

/** A watcher process (./watcher.ts) following `filters`; resolves once its watches run. */
function startWatcher(url: string, filters: string[]): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [path.join(repoRoot, "dist/bench/scale/watcher.js"), url, ...filters],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("watcher did not start in 30 s")), 30_000);
    child.once("exit", (code) => reject(new Error(`watcher exited with ${code}`)));
    child.stdout!.once("data", () => {
      clearTimeout(t);
      resolve(child);
    });
  });
}

/** Stops a watcher and reads its summary line. */
function stopWatcher(child: ChildProcess): Promise<number[]> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += String(d);
    });
    child.removeAllListeners("exit");
    child.once("exit", () => {
      try {
        resolve((JSON.parse(out.trim().split("\n").at(-1)!) as { lat: number[] }).lat);
      } catch (err) {
        reject(err);
      }
    });
    child.stdin!.write("stop\n");
  });
}

export async function putToCopy(
  url: string,
  tickets: KvBucket,
  watcherCount: number,
  where: "in-process" | "processes",
  /** "paced": writes spread evenly; "bursts": 42 at once every 100 ms. */
  pattern: "paced" | "bursts" = "paced",
): Promise<PutToCopy> {
  const lat: number[] = [];
  const watched = Array.from({ length: PER_SIDECAR }, (_, k) => providerName(100 + k));
  const lk = keyLayout("scoped", "bench/lat@1");
  const filters = watched.map((p) => lk.providerFilter(p)!);
  const children =
    where === "processes"
      ? await Promise.all(Array.from({ length: watcherCount }, () => startWatcher(url, filters)))
      : [];
  const watches =
    where === "in-process"
      ? (
          await Promise.all(
            Array.from({ length: watcherCount }, () =>
              Promise.all(filters.map((key) => tickets.watch({ include: "updates", key }))),
            ),
          )
        ).flat()
      : [];
  const dec = new TextDecoder();
  const loops = watches.map(async (w) => {
    for await (const e of w) {
      if (e.operation !== "PUT") continue;
      const sentAt = (JSON.parse(dec.decode(e.value)) as { sentAt?: number }).sentAt;
      if (sentAt !== undefined) lat.push(wall() - sentAt);
    }
  });
  let i = 0;
  const put = () => {
    const p = watched[i % PER_SIDECAR]!;
    const id = `20000000-0000-4000-8000-${String(++i).padStart(12, "0")}`;
    const key = lk.ticket({ provider: p, ticketId: id });
    return tickets.put(key, ticketValue(p, id, modelOf(100), "bench/lat@1", wall()));
  };
  const end = performance.now() + 8000;
  if (pattern === "bursts") {
    // 42 writes at once every 100 ms: the last of a burst queues behind the other 41.
    while (performance.now() < end) {
      await Promise.all(Array.from({ length: 42 }, put));
      await new Promise((r) => setTimeout(r, 100));
    }
  } else {
    // One write every 1000/420 ms, on a schedule that catches up after a late timer.
    const inFlight: Promise<unknown>[] = [];
    let next = performance.now();
    while (next < end) {
      inFlight.push(put());
      next += 1000 / WRITES_PER_S;
      const wait = next - performance.now();
      if (wait >= 1) await new Promise((r) => setTimeout(r, wait));
    }
    await Promise.all(inFlight);
  }
  await new Promise((r) => setTimeout(r, 500));
  for (const w of watches) w.stop();
  await Promise.all(loops);
  for (const l of await Promise.all(children.map(stopWatcher))) lat.push(...l);
  return {
    p50_ms: round(percentile(lat, 50), 2),
    p99_ms: round(percentile(lat, 99), 2),
    samples: lat.length,
  };
}
