// The web view in a real browser (docs/web-view.md, issue 33): a `standalone` process on a real
// nats-server with two emulated cards (the demo's RTX 5090 and RTX 4090), its view opened in
// Debian's chromium through playwright-core. The page loads clean, shows both cards with the VRAM
// the published state says, a placement in the decision stream within 2 s, an eviction as a
// change of the card's bar, a refusal with its reason, a call's story, and it comes back by
// itself after the server restarts. A traced call's trace id shows in its story: as text to copy,
// or, in an operator given --web-trace-url, as a link to the trace.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_FLEETS, type DemoFleet, startDemoFleet, writeDemoManifests } from "../../src/demo/index.js";
import { decisionSubject, encodeRecord } from "../../src/web/decision-record.js";
import type { DecisionRecord } from "../../src/web/view-types.js";
import { launchChromium, type PageProblems, watchPage } from "../helpers/browser.js";
import { type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { freePort, NatsServer } from "../helpers/nats-server.js";
import {
  type StandaloneProcess,
  startOperatorProcess,
  startStandaloneProcess,
} from "../helpers/standalone-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const AGENT = "crew-homelab/synthesizer";
let nats: NatsServer;
let nc: NatsConnection;
let fleet: DemoFleet;
let dir: string;
let webPort: number;
let standalone: StandaloneProcess;
let client: SchedulerClient;
let browser: Browser;
let page: Page;
let problems: PageProblems;

function standaloneArgs(): string[] {
  return [
    "--manifests",
    path.join(dir, "manifests"),
    "--bindings-dir",
    path.join(dir, "bindings"),
    "--nats",
    nats.url,
    "--proxy-listen",
    "",
    "--web-listen",
    `127.0.0.1:${webPort}`,
    "--probe-interval-ms",
    "300",
  ];
}

async function publishedState(
  provider: string,
): Promise<{ totalVramMiB: number; resident: Record<string, number> }> {
  const kv = await new Kvm(nc).open("kubemoot_provider_state");
  const e = await kv.get(provider);
  const s = e!.json<{ totalVramMiB: number; loadedModelFootprintsMiB: Record<string, number> }>();
  return { totalVramMiB: s.totalVramMiB, resident: s.loadedModelFootprintsMiB ?? {} };
}

/** The segments of a card's bar, as the page shows them. */
function segments(provider: string): Promise<{ kind: string; model: string; mib: number }[]> {
  return page
    .locator(`[data-testid=provider-card][data-provider="${provider}"] [data-testid=vram-seg]`)
    .evaluateAll((els) =>
      els.map((e) => ({
        kind: e.getAttribute("data-kind") ?? "",
        model: e.getAttribute("data-model") ?? "",
        mib: Number(e.getAttribute("data-mib")),
      })),
    );
}

async function loadOn(url: string, model: string): Promise<void> {
  const res = await fetch(`${url}/api/generate`, {
    method: "POST",
    body: JSON.stringify({ model, prompt: "", keep_alive: "1h" }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

function place(model: string, promptTokens = 500) {
  return client.call("Place", {
    agent: AGENT,
    threadId: `t-${Math.random()}`,
    phase: "mulling",
    candidates: [{ model, score: 90 }],
    promptTokens,
  });
}

beforeAll(async () => {
  nats = await NatsServer.start();
  nc = await connect({ servers: nats.url });
  fleet = await startDemoFleet(20, DEMO_FLEETS.prod);
  dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-web-"));
  writeDemoManifests(path.join(dir, "manifests"), fleet);
  webPort = await freePort();
  standalone = await startStandaloneProcess(standaloneArgs());
  client = schedulerClient(standalone.apiAddress);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  problems = watchPage(page);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  client?.close();
  await standalone?.stop();
  await fleet?.close();
  await nc?.close();
  await nats?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the web view in chromium", () => {
  it("loads with no console error or failed request, and shows both cards as published", async () => {
    expect(standalone.webUrl).toBe(`http://127.0.0.1:${webPort}/`);
    const res = await page.goto(standalone.webUrl);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.getByTestId("conn-status").filter({ hasText: "live" }).waitFor({ timeout: 10_000 });
    await page.locator("[data-testid=provider-card]").nth(1).waitFor({ timeout: 10_000 });
    for (const card of fleet.cards) {
      const name = card.card.provider;
      const published = await publishedState(name);
      expect(published.totalVramMiB).toBe(card.card.vramMiB);
      const el = page.locator(`[data-testid=provider-card][data-provider="${name}"]`);
      await expect
        .poll(() => el.getByTestId("vram-total").textContent())
        .toContain(`${published.totalVramMiB} MiB`);
      const segs = await segments(name);
      expect(segs.reduce((a, s) => a + s.mib, 0)).toBe(published.totalVramMiB);
    }
    // The ModelProviders' gpu labels name the cards.
    await expect
      .poll(() => page.getByTestId("provider-label").allTextContents())
      .toEqual(["rtx-5090", "rtx-4090"]);
    expect(problems.consoleErrors).toEqual([]);
    expect(problems.failedRequests).toEqual([]);
    expect(problems.errorAnswers).toEqual([]);
  });

  it("shows a placement in the decision stream within 2 s, and its story on a click", async () => {
    const r = await place("qwen3:8b");
    const ticketId = r.placement?.ticketId as string;
    expect(ticketId, JSON.stringify(r)).toBeTruthy();
    const row = page.locator(`[data-testid=decision-row][data-kind=placed][data-id="${ticketId}"]`);
    await row.waitFor({ timeout: 2000 });
    expect(await row.getAttribute("data-provider")).toBe(r.placement.provider);
    await client.call("Release", {
      ticketId,
      outcome: "CALL_OUTCOME_SUCCEEDED",
      latencyMs: 900,
      promptTokens: 480,
    });
    const released = page.locator(`[data-testid=decision-row][data-kind=released][data-id="${ticketId}"]`);
    await released.waitFor({ timeout: 5000 });
    await released.click();
    const story = page.getByTestId("call-story");
    await story.waitFor({ timeout: 5000 });
    // The attribution, as Attribute answers it.
    await expect
      .poll(() => story.locator("[data-testid=story-field][data-key=ticketId]").textContent())
      .toContain(ticketId);
    await expect
      .poll(() => story.locator("[data-testid=story-field][data-key=promptTokens]").textContent())
      .toContain("480");
    await page.getByTestId("call-story-close").click();
    await story.waitFor({ state: "detached", timeout: 5000 });
  });

  it("shows an eviction as a change of the card's bar, with the VRAM the published state says", async () => {
    const a = fleet.cards.find((c) => c.card.provider === "ollama-a")!;
    await loadOn(a.url, "qwen3:14b");
    await loadOn(a.url, "qwen3:8b");
    await waitUntil(
      async () => Object.keys((await publishedState("ollama-a")).resident).length >= 2,
      10_000,
      "both models published on ollama-a",
    );
    const published = await publishedState("ollama-a");
    const residentOf = async () =>
      Object.fromEntries(
        (await segments("ollama-a")).filter((s) => s.kind === "resident").map((s) => [s.model, s.mib]),
      );
    await expect.poll(residentOf, { timeout: 10_000 }).toEqual(published.resident);
    // qwen3:32b fits only the 5090 and not beside these two: the call unloads one.
    const r = await place("qwen3:32b");
    expect(r.placement?.provider, JSON.stringify(r)).toBe("ollama-a");
    const evicted = r.placement.evicted as string[];
    expect(evicted.length).toBeGreaterThan(0);
    await expect
      .poll(async () => (await segments("ollama-a")).map((s) => `${s.kind}:${s.model}`), { timeout: 10_000 })
      .toContain("loading:qwen3:32b");
    await expect
      .poll(async () => Object.keys(await residentOf()), { timeout: 10_000 })
      .not.toContain(evicted[0]);
    const row = page.locator(
      `[data-testid=decision-row][data-kind=placed][data-id="${r.placement.ticketId}"]`,
    );
    await row.waitFor({ timeout: 2000 });
    await expect.poll(() => row.textContent()).toContain(evicted[0]);
    await client.call("Release", { ticketId: r.placement.ticketId, outcome: "CALL_OUTCOME_UNSPECIFIED" });
  });

  it("shows a refusal with its reason", async () => {
    const r = await place("qwen3:8b", 5_000_000);
    expect(r.refusal?.reason, JSON.stringify(r)).toBe("REASON_PROMPT_TOO_LARGE");
    const row = page.locator("[data-testid=decision-row][data-kind=refused][data-model='qwen3:8b']").first();
    await row.waitFor({ timeout: 2000 });
    await expect.poll(() => row.getByTestId("decision-reason").textContent()).toContain("prompt-too-large");
    await expect
      .poll(() => page.locator("[data-testid=refusal-count][data-reason=prompt-too-large]").count(), {
        timeout: 5000,
      })
      .toBe(1);
    expect(problems.consoleErrors).toEqual([]);
    expect(problems.failedRequests).toEqual([]);
    expect(problems.errorAnswers).toEqual([]);
  });

  it("comes back by itself after the server restarts", async () => {
    expect(await standalone.stop()).toBe(0);
    await expect
      .poll(() => page.getByTestId("conn-status").textContent(), { timeout: 10_000 })
      .not.toContain("live");
    standalone = await startStandaloneProcess(standaloneArgs());
    client.close();
    client = schedulerClient(standalone.apiAddress);
    await page.getByTestId("conn-status").filter({ hasText: "live" }).waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator("[data-testid=provider-card]").count(), { timeout: 10_000 }).toBe(2);
    // Live again: a new placement shows.
    const r = await place("qwen3:8b");
    await page
      .locator(`[data-testid=decision-row][data-kind=placed][data-id="${r.placement.ticketId}"]`)
      .waitFor({ timeout: 2000 });
    await client.call("Release", { ticketId: r.placement.ticketId, outcome: "CALL_OUTCOME_UNSPECIFIED" });
  });
});

describe("a call's trace id in the web view", () => {
  const TRACE_URL = "https://jaeger.example/trace/{traceId}";
  let operator: StandaloneProcess | undefined;

  afterAll(async () => {
    await operator?.stop();
  });

  /** A placement record of a traced call, published as a sidecar publishes it. */
  function publishTraced(): { id: string; traceId: string } {
    const id = `traced-${randomBytes(6).toString("hex")}`;
    const traceId = randomBytes(16).toString("hex");
    const r: DecisionRecord = {
      v: 1,
      id,
      at: Date.now(),
      kind: "placed",
      agent: AGENT,
      crew: "crew-homelab/homelab",
      instance: "test-sidecar",
      model: "qwen3:8b",
      provider: "ollama-b",
      engine: "ollama",
      cold: false,
      waitMs: 0,
      policy: "time",
      weight: 1,
      traceId,
    };
    nc.publish(decisionSubject(AGENT), encodeRecord(r)!);
    return { id, traceId };
  }

  /** Opens the story of call `id` on `p` once its row shows the trace marker; the story's trace fact. */
  async function traceInStory(p: Page, id: string, traceId: string) {
    const row = p.locator(`[data-testid=decision-row][data-kind=placed][data-id="${id}"]`);
    await row.waitFor({ timeout: 2000 });
    expect(await row.getByTestId("decision-trace").getAttribute("title", { timeout: 5000 })).toContain(
      traceId,
    );
    await row.click();
    const story = p.getByTestId("call-story");
    await story.waitFor({ timeout: 5000 });
    const trace = story.getByTestId("story-trace");
    await trace.waitFor({ timeout: 5000 });
    return trace;
  }

  it("shows it as text to copy where no template is set", async () => {
    const { id, traceId } = publishTraced();
    const trace = await traceInStory(page, id, traceId);
    expect(await trace.textContent()).toBe(traceId);
    expect(await trace.evaluate((e) => e.tagName)).toBe("SPAN");
    await page.getByTestId("call-story-close").click();
  });

  it("refuses to start with a template that is not an http(s) URL with {traceId}", async () => {
    const d = path.join(dir, "trace-refused");
    mkdirSync(path.join(d, "manifests"), { recursive: true });
    const started = startOperatorProcess([
      ...["--manifests", path.join(d, "manifests"), "--bindings-dir", path.join(d, "bindings")],
      ...["--nats", nats.url, "--web-listen", "127.0.0.1:0"],
      ...["--web-trace-url", "https://jaeger.example/trace/"],
    ]);
    // One that starts anyway is stopped, not left running.
    void started.then((p) => p.stop()).catch(() => {});
    await expect(started).rejects.toThrow(/--web-trace-url: expected a URL with \{traceId\}/);
  });

  it("links it to the trace in an operator given --web-trace-url", async () => {
    // The operator's view on the same NATS: no manifests of its own, it only reads.
    const d = path.join(dir, "trace-operator");
    mkdirSync(path.join(d, "manifests"), { recursive: true });
    operator = await startOperatorProcess([
      ...["--manifests", path.join(d, "manifests"), "--bindings-dir", path.join(d, "bindings")],
      ...["--nats", nats.url, "--web-listen", "127.0.0.1:0", "--web-trace-url", TRACE_URL],
    ]);
    expect(operator.webUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const snapshot = (await (await fetch(`${operator.webUrl}api/snapshot`)).json()) as { traceUrl?: string };
    expect(snapshot.traceUrl).toBe(TRACE_URL);
    const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const seen = watchPage(p);
    await p.goto(operator.webUrl);
    await p.getByTestId("conn-status").filter({ hasText: "live" }).waitFor({ timeout: 10_000 });
    const { id, traceId } = publishTraced();
    const link = await traceInStory(p, id, traceId);
    expect(await link.evaluate((e) => e.tagName)).toBe("A");
    expect(await link.getAttribute("href")).toBe(`https://jaeger.example/trace/${traceId}`);
    expect(await link.getAttribute("target")).toBe("_blank");
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await link.textContent()).toBe(traceId);
    expect(seen.consoleErrors).toEqual([]);
    expect(seen.failedRequests).toEqual([]);
    expect(seen.errorAnswers).toEqual([]);
    await p.close();
  });
});
