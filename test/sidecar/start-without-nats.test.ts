// A sidecar started while no NATS server listens on its URL (docs/deploy.md "Start-up and
// readiness"): the process stays alive and not ready on both ports (gRPC health NOT_SERVING,
// /readyz 503), its RPCs answer UNAVAILABLE at once (gRPC) and 503 with a JSON error (Connect),
// it warns once per failed attempt with the URL's credentials redacted, and becomes ready, proxy
// included, once a server starts on that port. SIGTERM while it still retries exits 0 at once;
// a configuration error (a bad flag, a missing credentials file) still exits 2 at start.
import * as grpc from "@grpc/grpc-js";
import { afterAll, describe, expect, it } from "vitest";
import { schedulerClient } from "../helpers/grpc-client.js";
import { checkHealth, healthClient } from "../helpers/health-client.js";
import { freePort, NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const SCHEDULER = "kubemoot.scheduler.v1.SchedulerService";
const SECRET = "hunter2-do-not-print";

let nats: NatsServer | undefined;
const sidecars: SidecarProcess[] = [];
afterAll(async () => {
  for (const s of sidecars) await s.stop();
  await nats?.dispose();
});

async function startWaiting(port: number): Promise<SidecarProcess> {
  const s = await startSidecarProcess(
    [
      "--nats",
      `nats://kubemoot:${SECRET}@127.0.0.1:${port}`,
      "--agent",
      "crew/a",
      "--health-listen",
      "127.0.0.1:0",
      "--proxy-listen",
      "127.0.0.1:0",
    ],
    {},
    { until: "listening" },
  );
  sidecars.push(s);
  return s;
}

const readyz = async (address: string) => {
  const res = await fetch(`http://${address}/readyz`);
  return { status: res.status, body: await res.json() };
};

describe("a sidecar started before its NATS server", () => {
  it("stays alive and not ready, answers UNAVAILABLE, and becomes ready once NATS is up", async () => {
    const port = await freePort();
    const sidecar = await startWaiting(port);
    const clients = [sidecar.apiAddress, sidecar.healthAddress].map(healthClient);
    try {
      // A few attempts fail (250 ms, 500 ms, 1 s, … apart): the process is still there.
      await waitUntil(
        () => (sidecar.output().match(/shared state not open yet/g) ?? []).length >= 3,
        10_000,
        "three failed attempts",
      );
      expect(sidecar.proc.exitCode).toBeNull();
      for (const c of clients) {
        expect(await checkHealth(c, "")).toBe("NOT_SERVING");
        expect(await checkHealth(c, SCHEDULER)).toBe("NOT_SERVING");
        expect(await checkHealth(c, "kubemoot.liveness")).toBe("SERVING");
      }
      for (const address of [sidecar.apiAddress, sidecar.healthAddress]) {
        expect(await readyz(address)).toEqual({ status: 503, body: { status: "state-unavailable" } });
        expect((await fetch(`http://${address}/healthz`)).status).toBe(200);
      }

      // The RPCs answer at once: UNAVAILABLE over gRPC, 503 with a JSON error over Connect.
      const grpcClient = schedulerClient(sidecar.apiAddress);
      const place = { agent: "crew/a", candidates: [{ model: "qwen3:8b", score: 60 }], promptChars: "400" };
      const err = (await grpcClient.call("Place", place).catch((e: unknown) => e)) as grpc.ServiceError;
      grpcClient.close();
      expect(err.code).toBe(grpc.status.UNAVAILABLE);
      expect(err.details).toMatch(/shared state is not open yet/);
      const connect = await fetch(`http://${sidecar.apiAddress}/${SCHEDULER}/Place`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(place),
      });
      expect(connect.status).toBe(503);
      expect(await connect.json()).toMatchObject({ code: "unavailable" });

      // One warning per failed attempt, the URL's password never printed.
      const warnings = sidecar
        .output()
        .split("\n")
        .filter((l) => l.includes("shared state not open yet"));
      for (const w of warnings)
        expect(JSON.parse(w)).toMatchObject({ level: 40, attempt: expect.any(Number) });
      const attempts = warnings.map((w) => JSON.parse(w).attempt as number);
      expect(attempts).toEqual(attempts.map((_, i) => i + 1));
      expect(sidecar.output()).toContain("nats://***@127.0.0.1");
      expect(sidecar.output()).not.toContain(SECRET);

      nats = await NatsServer.start({ port });
      await waitUntil(
        async () => (await readyz(sidecar.healthAddress)).status === 200,
        15_000,
        "ready once NATS is up",
      );
      for (const c of clients) {
        expect(await checkHealth(c, "")).toBe("SERVING");
        expect(await checkHealth(c, SCHEDULER)).toBe("SERVING");
      }
      expect(await readyz(sidecar.apiAddress)).toEqual({ status: 200, body: { status: "serving" } });
      // The proxy started with the state: its address is on the started line.
      await waitUntil(() => /proxy on (\S+)/.test(sidecar.output()), 5_000, "the started line");
      const proxy = /proxy on (\S+)/.exec(sidecar.output())![1]!;
      expect((await fetch(`http://${proxy}/`)).status).toBe(200);
      expect(sidecar.output()).not.toContain(SECRET);
    } finally {
      for (const c of clients) c.close();
    }
    expect(await sidecar.stop()).toBe(0);
  });

  it("exits 0 promptly on SIGTERM while it is still retrying", async () => {
    const sidecar = await startWaiting(await freePort());
    await waitUntil(() => sidecar.output().includes("shared state not open yet"), 10_000, "a failed attempt");
    const t0 = Date.now();
    expect(await sidecar.stop()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(sidecar.output()).toContain("stopped before the shared state was open");
  });

  it("still exits 2 on a configuration error: a bad flag, a missing credentials file", async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const badFlag = await startSidecarProcess(
      ["--nats", url, "--no-such-flag"],
      {},
      { until: "listening" },
    ).catch((e: unknown) => String(e));
    expect(badFlag).toMatch(/sidecar exited with 2 before listening:[\s\S]*no-such-flag/);
    const noCreds = await startSidecarProcess(
      ["--nats", url, "--agent", "crew/a"],
      { KUBEMOOT_NATS_CREDS: "/nonexistent/nats.creds" },
      { until: "listening" },
    ).catch((e: unknown) => String(e));
    expect(noCreds).toMatch(
      /sidecar exited with 2 before listening:[\s\S]*KUBEMOOT_NATS_CREDS: no such file/,
    );
  });
});
