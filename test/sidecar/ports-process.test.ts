// The sidecar process as the webhook runs it, but on loopback: the API and a health-only port
// (--health-listen), with the listener limits given as flags and environment variables. Over
// real sockets: the health port answers gRPC health and refuses Place; the API serves Place;
// a connection that says nothing is closed at the configured deadline; connections past the
// configured cap are closed at once.
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schedulerClient } from "../helpers/grpc-client.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

let sidecar: SidecarProcess;
let healthAddress = "";

beforeAll(async () => {
  sidecar = await startSidecarProcess(
    [
      "--state",
      "memory",
      "--agent",
      "crew/a",
      "--proxy-listen",
      "",
      "--health-listen",
      "127.0.0.1:0",
      "--headers-timeout-ms",
      "300",
      "--request-timeout-ms",
      "2000",
    ],
    { KUBEMOOT_MAX_CONNECTIONS: "3" },
  );
  healthAddress = /health on ([^\s,]+)/.exec(sidecar.output())?.[1] ?? "";
});
afterAll(async () => {
  await sidecar?.stop();
});

async function raw(address: string) {
  const [host, port] = address.split(":");
  const socket = net.connect(Number(port), host);
  socket.on("error", () => undefined);
  const got: Buffer[] = [];
  socket.on("data", (c: Buffer) => got.push(c));
  const closed = new Promise<string>((r) => socket.once("close", () => r(Buffer.concat(got).toString())));
  await new Promise((r) => socket.once("connect", r));
  return { socket, closed };
}

describe("sidecar process with --health-listen", () => {
  it("prints the health port beside the API", () => {
    expect(healthAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(healthAddress).not.toBe(sidecar.apiAddress);
  });

  it("answers health on the health port and refuses Place there; the API serves Place", async () => {
    const onHealth = schedulerClient(healthAddress);
    const onApi = schedulerClient(sidecar.apiAddress);
    try {
      await expect(onHealth.call("Place", { agent: "crew/a" })).rejects.toMatchObject({
        code: grpc.status.UNIMPLEMENTED,
      });
      // No candidates: refused by the scheduler, which proves the call reached it.
      await expect(onApi.call("Place", { agent: "crew/a" })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
      });
    } finally {
      onHealth.close();
      onApi.close();
    }
    const res = await fetch(`http://${healthAddress}/readyz`);
    expect([res.status, await res.json()]).toEqual([200, { status: "serving" }]);
  });

  it("closes a silent connection at --headers-timeout-ms, on both ports", async () => {
    for (const address of [sidecar.apiAddress, healthAddress]) {
      const c = await raw(address);
      expect(await c.closed).toBe("");
    }
  });

  it("closes connections past KUBEMOOT_MAX_CONNECTIONS at once", async () => {
    // Connections of the tests before (keep-alive) may still hold slots: open until one is
    // refused, which must happen by the fourth.
    const kept: Awaited<ReturnType<typeof raw>>[] = [];
    let refused = false;
    for (let i = 0; i < 4 && !refused; i++) {
      const c = await raw(healthAddress);
      c.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
      const answered = await Promise.race([
        new Promise<boolean>((r) => c.socket.once("data", () => r(true))),
        c.closed.then(() => false),
      ]);
      if (answered) kept.push(c);
      else refused = true;
    }
    expect(refused).toBe(true);
    expect(kept.length).toBeLessThanOrEqual(3);
    for (const c of kept) expect(c.socket.destroyed).toBe(false);
    for (const c of kept) c.socket.destroy();
  });
});
