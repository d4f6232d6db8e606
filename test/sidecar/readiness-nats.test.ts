import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSidecar, startSidecar } from "../../sidecar/main.js";
import { schedulerConfigFromEnv } from "../../src/scheduler/index.js";
import { checkHealth, type HealthClient, healthClient } from "../helpers/health-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { waitUntil } from "../helpers/wait-until.js";

const SCHEDULER = "kubemoot.scheduler.v1.SchedulerService";
let nats: NatsServer;
let sidecar: RunningSidecar;
let clients: HealthClient[] = [];

const check = checkHealth;
const readyz = async (address: string) => (await fetch(`http://${address}/readyz`)).status;

/** Readiness as each port reports it, over gRPC ("" and the scheduler service) and HTTP. */
async function readiness(): Promise<string[]> {
  const out: string[] = [];
  for (const [i, c] of clients.entries()) {
    out.push(await check(c, ""), await check(c, SCHEDULER));
    out.push(String(await readyz(i === 0 ? sidecar.api.address : sidecar.api.healthAddress)));
  }
  return out;
}
const liveness = () => Promise.all(clients.map((c) => check(c, "kubemoot.liveness")));

beforeAll(async () => {
  nats = await NatsServer.start();
  sidecar = await startSidecar({
    listen: "127.0.0.1:0",
    healthListen: "127.0.0.1:0",
    state: nats.url,
    config: schedulerConfigFromEnv({ KUBEMOOT_NAMESPACE: "crew", KUBEMOOT_AGENT_NAME: "a" }),
    logger: pino({ level: "silent" }),
    drainMs: 0,
  });
  clients = [sidecar.api.address, sidecar.api.healthAddress].map(healthClient);
});
afterAll(async () => {
  for (const c of clients) c.close();
  if (nats && !nats.running) await nats.restart();
  await sidecar?.close();
  await nats?.dispose();
});

describe("readiness and the NATS connection", () => {
  it("is NOT_SERVING on both ports while NATS is down, SERVING again once it is back", async () => {
    const up = ["SERVING", "SERVING", "200"];
    const down = ["NOT_SERVING", "NOT_SERVING", "503"];
    expect(await readiness()).toEqual([...up, ...up]);

    await nats.stop();
    await waitUntil(
      async () => (await readiness()).join() === [...down, ...down].join(),
      15_000,
      "not ready",
    );
    expect(await liveness()).toEqual(["SERVING", "SERVING"]);
    const body = await (await fetch(`http://${sidecar.api.healthAddress}/readyz`)).json();
    expect(body).toEqual({ status: "state-unavailable" });

    await nats.restart();
    await waitUntil(async () => (await readiness()).join() === [...up, ...up].join(), 30_000, "ready again");
    expect(await liveness()).toEqual(["SERVING", "SERVING"]);
  });
});
