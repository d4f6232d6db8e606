// A collector that is down loses spans, never calls (docs/tracing.md "Configuration"): a sidecar
// process exports to a "collector" that accepts connections and never answers, with a short
// batch delay and export timeout. It does try to export (connections arrive), and every call
// through its proxy still answers 200; the process stops cleanly.
import net from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { memorySidecarArgs, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

const MODEL = "qwen3:8b";
let card: EmulatorHandle;
let sidecar: SidecarProcess;
let blackHole: net.Server;
let connections = 0;
const held: net.Socket[] = [];

beforeAll(async () => {
  card = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    models: { [MODEL]: 4863 },
    numParallel: 4,
    timeScale: 0.01,
    outputTokens: 8,
  });
  blackHole = net.createServer((socket) => {
    connections++;
    held.push(socket);
    socket.on("error", () => undefined);
  });
  await new Promise<void>((r) => blackHole.listen(0, "127.0.0.1", () => r()));
  const { port } = blackHole.address() as net.AddressInfo;
  sidecar = await startSidecarProcess(
    memorySidecarArgs("--provider", `card=${card.url},vram=24563,parallel=4`),
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: "20",
      OTEL_EXPORTER_OTLP_TIMEOUT: "300",
    },
  );
}, 30_000);

afterAll(async () => {
  await card?.close();
  for (const s of held) s.destroy();
  await new Promise((r) => blackHole?.close(r));
});

it("answers every call while its spans cannot be exported", async () => {
  const statuses: number[] = [];
  for (let round = 0; round < 10; round++) {
    const answers = await Promise.all(
      Array.from({ length: 4 }, async (_, n) => {
        const res = await fetch(`http://${sidecar.proxyAddress}/api/chat`, {
          method: "POST",
          headers: { traceparent: `00-${"a".repeat(31)}${n}-${"b".repeat(16)}-01` },
          body: JSON.stringify({
            model: MODEL,
            stream: false,
            messages: [{ role: "user", content: `call ${round}` }],
          }),
        });
        await res.text();
        return res.status;
      }),
    );
    statuses.push(...answers);
  }
  expect(statuses).toEqual(Array(40).fill(200));
  // It did try: the batches went to the collector that never answers.
  expect(connections).toBeGreaterThan(0);
  expect(await sidecar.stop()).toBe(0);
}, 60_000);
