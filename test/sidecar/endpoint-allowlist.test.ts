// Issue 17, endpoint allowlist: any NATS writer could redirect every agent's prompts by
// publishing a provider state that names its own listener. Real parts: a nats-server, sidecar
// processes, an emulated GPU published by the provider publisher, and a "rogue" HTTP listener
// that answers like Ollama, published by a second writer as an idle GPU with the model warm
// (every sidecar's first choice). The official ollama client talks to the sidecars' proxies.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Ollama } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ollamaOps } from "../../sidecar/ollama-ops.js";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { parseEndpointAllowlist } from "../../src/net/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const MODEL = "qwen3:8b";
let nats: NatsServer;
let operatorStore: StateStore;
let intruderStore: StateStore;
let publisher: ProviderPublisher;
let gpu: EmulatorHandle;
let rogue: Server;
let rogueUrl = "";
/** Every request the rogue listener received: method, path, body. */
const rogueSaw: string[] = [];
const sidecars: SidecarProcess[] = [];

async function publishRogue(): Promise<void> {
  await intruderStore.providerWriter.publish({
    name: "gpu-rogue",
    endpoint: rogueUrl,
    maxParallel: 16,
    activeCount: 0,
    queueDepth: 0,
    loadedModels: [MODEL],
    ready: true,
    lastProbedAt: new Date().toISOString(),
    totalVramMiB: 81920,
    loadedModelFootprintsMiB: { [MODEL]: 4863 },
    availableModelFootprintsMiB: {},
    contextLength: 8192,
    loadedModelContextLengths: { [MODEL]: 8192 },
  });
}

async function rejectedCount(s: SidecarProcess): Promise<number> {
  const text = await (await fetch(`${s.apiUrl}/metrics`)).text();
  const m = /^kubemoot_provider_rejected_total\{reason="endpoint"\} (\d+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

function chat(s: SidecarProcess, i: number) {
  return new Ollama({ host: `http://${s.proxyAddress}` }).chat({
    model: MODEL,
    messages: [{ role: "user", content: `secret prompt ${i}` }],
  });
}

beforeAll(async () => {
  rogue = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      rogueSaw.push(`${req.method} ${req.url} ${body}`);
      const answer = {
        model: MODEL,
        created_at: new Date().toISOString(),
        message: { role: "assistant", content: "from the rogue" },
        done: true,
        done_reason: "stop",
        prompt_eval_count: 10,
        eval_count: 3,
      };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((r) => rogue.listen(0, "127.0.0.1", r));
  rogueUrl = `http://127.0.0.1:${(rogue.address() as AddressInfo).port}`;

  nats = await NatsServer.start();
  operatorStore = await openStateStore(nats.url);
  intruderStore = await openStateStore(nats.url);
  gpu = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { [MODEL]: 4863 },
    contextLength: 8192,
    timeScale: 0.01,
  });
  publisher = new ProviderPublisher({ sink: operatorStore.providerWriter, intervalMs: 60_000 });
  publisher.start();
  await publisher.setProviders([
    { name: "gpu-legit", endpoint: gpu.url, totalVramMiB: 24563, maxParallel: 4, contextLength: 8192 },
  ]);
  await publisher.probeNow();
  await publishRogue();
});

afterAll(async () => {
  for (const s of sidecars) expect(await s.stop()).toBe(0);
  await publisher?.stop();
  await gpu?.close();
  await intruderStore?.close();
  await operatorStore?.close();
  await nats?.dispose();
  await new Promise((r) => rogue?.close(r));
});

describe("KUBEMOOT_PROVIDER_ENDPOINTS", () => {
  it("without the list (the control), the rogue entry draws the calls and the prompts; the sidecar warns at start", async () => {
    const s = await startSidecarProcess([
      "--nats",
      nats.url,
      "--proxy-listen",
      "127.0.0.1:0",
      "--agent",
      "crew/b",
    ]);
    sidecars.push(s);
    for (let i = 0; i < 3; i++) await chat(s, i);
    expect(rogueSaw.length).toBeGreaterThan(0);
    expect(rogueSaw.join("\n")).toMatch(/secret prompt/);
    expect(s.output().match(/KUBEMOOT_PROVIDER_ENDPOINTS is empty/g)).toHaveLength(1);
    expect(await rejectedCount(s)).toBe(0);
  });

  it("keeps a provider state naming another endpoint out: no call, no prompt reaches it, and it is counted", async () => {
    const legitPort = new URL(gpu.url).port;
    const s = await startSidecarProcess(
      ["--nats", nats.url, "--proxy-listen", "127.0.0.1:0", "--agent", "crew/a"],
      {
        KUBEMOOT_PROVIDER_ENDPOINTS: `10.0.0.0/8, *.gpu.svc.cluster.local:11434, 127.0.0.1:${legitPort}`,
      },
    );
    sidecars.push(s);
    const before = rogueSaw.length;
    const providers: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await chat(s, i);
      expect(r.message.content).not.toBe("from the rogue");
      providers.push(r.model);
    }
    expect(providers).toHaveLength(10);
    expect(rogueSaw.length).toBe(before);
    // The entry was seen once (one revision): counted once.
    expect(await rejectedCount(s)).toBe(1);
    // Republished twice more (a writer refreshing it): counted per revision, logged once.
    await publishRogue();
    await publishRogue();
    await waitUntil(async () => (await rejectedCount(s)) === 3, 10_000, "three rejected revisions");
    for (let i = 0; i < 3; i++) await chat(s, i);
    expect(rogueSaw.length).toBe(before);
    const warnings = s
      .output()
      .match(/provider state rejected: endpoint not in KUBEMOOT_PROVIDER_ENDPOINTS/g);
    expect(warnings).toHaveLength(1);
    expect(s.output()).not.toMatch(/secret prompt/);
    expect(s.output()).not.toMatch(/KUBEMOOT_PROVIDER_ENDPOINTS is empty/);
  });

  it("a bad entry stops the sidecar at start with a message naming it", async () => {
    await expect(
      startSidecarProcess(["--nats", nats.url, "--agent", "crew/c"], {
        KUBEMOOT_PROVIDER_ENDPOINTS: "*.gpu.svc:11434,10.0.0.0/33",
      }),
    ).rejects.toThrow(/KUBEMOOT_PROVIDER_ENDPOINTS: entry "10\.0\.0\.0\/33": prefix length must be 0-32/);
    await expect(
      startSidecarProcess(["--nats", nats.url, "--agent", "crew/c", "--provider-endpoints", "http://gpu:1"]),
    ).rejects.toThrow(/--provider-endpoints: entry "http:\/\/gpu:1": expected host\[:port\] or a CIDR/);
  });

  it("never sends an unload or a load to an endpoint outside the list", async () => {
    const before = rogueSaw.length;
    const ops = ollamaOps(parseEndpointAllowlist(`${new URL(gpu.url).host}`, "KUBEMOOT_PROVIDER_ENDPOINTS"));
    await expect(ops.unload(rogueUrl, MODEL)).rejects.toThrow(/not in KUBEMOOT_PROVIDER_ENDPOINTS/);
    await expect(ops.load(rogueUrl, MODEL)).rejects.toThrow(/not in KUBEMOOT_PROVIDER_ENDPOINTS/);
    // The allowed one is still reached (the guard is not a blanket refusal).
    await ops.unload(gpu.url, MODEL);
    await ops.close();
    expect(rogueSaw.length).toBe(before);
  });
});
