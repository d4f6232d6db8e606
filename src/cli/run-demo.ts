// `kubemoot-scheduler demo` (what `npm start` runs): standalone (operator + publisher +
// scheduler API + proxy on the embedded store) over two GPUs (`--fleet prod`: two emulated
// Ollama cards; `--fleet mixed`: an Ollama card and an emulated vLLM server; `--fleet real`: an
// Ollama card and a real llama.cpp on the CPU), with the example crew sending calls through the
// proxy, and a live view. Everything runs in this one process but the real llama.cpp, a child
// process it stops on the way out, so stopping leaves no process and no open port behind.

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import {
  addResult,
  type CallResult,
  type CardView,
  CrewTraffic,
  DEMO_FLEETS,
  type DemoAgent,
  type DemoFleetName,
  emptyTotals,
  placementLine,
  renderScreen,
  type Screen,
  startDemoFleet,
  statusLine,
  totalsLine,
  writeDemoManifests,
} from "../demo/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { loadManifests } from "../operator/index.js";
import { schedulerConfigFromEnv } from "../scheduler/index.js";
import { SETTINGS } from "../settings/index.js";
import type { LaunchedStandalone, SidecarHost, WebLaunch } from "./host.js";

export interface DemoOptions {
  /** Seconds; 0 = until stopped. */
  durationS: number;
  seed: number;
  /** GPU time scale: 10 = loads and tokens ten times faster than real cards. */
  speed: number;
  /** Which emulated cards and example bundle: prod (two Ollama cards) or mixed (Ollama + vLLM). */
  fleet?: DemoFleetName;
  out: NodeJS.WriteStream;
  /** Resolves when the user asks to stop (Ctrl-C). */
  stopSignal: Promise<void>;
  logLevel?: string;
  /** The read-only web view (docs/web-view.md); absent or an empty address = none. */
  web?: WebLaunch;
}

export async function runDemo(host: SidecarHost, o: DemoOptions): Promise<number> {
  const tty = o.out.isTTY === true;
  const logger = pino({ level: o.logLevel ?? "warn" }, pino.destination(2));
  const dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-demo-"));
  const fleet = await startDemoFleet(o.speed, DEMO_FLEETS[o.fleet ?? "prod"], dir);
  let standalone: LaunchedStandalone | undefined;
  let traffic: CrewTraffic | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const manifests = path.join(dir, "manifests");
    writeDemoManifests(manifests, fleet);
    standalone = await host.startStandalone({
      manifests: [manifests],
      bindingsDir: path.join(dir, "bindings"),
      nats: "",
      listen: "127.0.0.1:0",
      proxyListen: "127.0.0.1:0",
      config: { ...schedulerConfigFromEnv({}), waitLimitS: 60 },
      logger,
      probeIntervalMs: Math.max(250, 5000 / o.speed),
      ...(o.web
        ? {
            web: {
              ...o.web,
              labels: Object.fromEntries(fleet.cards.map((c) => [c.card.provider, c.card.label])),
            },
          }
        : {}),
    });
    const webUrl = standalone.webUrl;
    const agents = await demoAgents(manifests, standalone);
    const recent: CallResult[] = [];
    const totals = emptyTotals();
    const started = Date.now();
    o.out.write(
      `kubemoot-scheduler demo: API on ${standalone.sidecar.api.address}, proxy on ${standalone.proxyAddress}; ` +
        `${agents.length} agents, GPUs ${fleet.cards.map((c) => `${c.card.provider} (${c.card.label}, ${c.card.engine})`).join(" and ")}\n` +
        (webUrl ? `kubemoot-scheduler demo: web view on ${webUrl}\n` : ""),
    );
    traffic = new CrewTraffic({
      proxyUrl: `http://${standalone.proxyAddress}`,
      agents,
      seed: o.seed,
      meanGapMs: 8000 / o.speed,
      onResult: (r) => {
        addResult(totals, r);
        recent.unshift(r);
        recent.length = Math.min(recent.length, 8);
        if (!tty) o.out.write(`${placementLine(r)}\n`);
      },
    });
    traffic.start();
    const marks = new Map<string, string>();
    // What a card shows from its /metrics is scraped (async) each tick; the view renders the last read.
    const sample = () => {
      for (const c of fleet.cards) void c.sample();
    };
    const screen = (): Screen => ({
      elapsedS: (Date.now() - started) / 1000,
      speed: o.speed,
      seed: o.seed,
      cards: fleet.cards.map((c): CardView => {
        const u = c.kvCacheUsage();
        return {
          provider: c.card.provider,
          label: c.card.label,
          engine: c.card.engine,
          state: c.state(),
          ...(u === undefined ? {} : { kvCacheUsage: u }),
        };
      }),
      recent,
      totals,
      webUrl,
    });
    let ticks = 0;
    sample();
    timer = setInterval(() => {
      ticks++;
      sample();
      if (tty) o.out.write(`\x1b[H\x1b[2J${renderScreen(screen(), marks)}\n`);
      else if (ticks % 5 === 0) o.out.write(`${statusLine(screen())}\n`);
    }, 1000);
    const done =
      o.durationS > 0
        ? new Promise<void>((r) => setTimeout(r, o.durationS * 1000).unref())
        : new Promise<void>(() => {});
    await Promise.race([done, o.stopSignal]);
    clearInterval(timer);
    timer = undefined;
    await traffic.stop();
    if (tty) o.out.write(`\x1b[H\x1b[2J${renderScreen(screen(), marks)}\n`);
    o.out.write(`\nsummary: ${totalsLine(totals)}\n`);
    return 0;
  } finally {
    if (timer) clearInterval(timer);
    await traffic?.stop();
    await standalone?.close();
    await fleet.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The crew's agents with their bound model and candidates, from the operator's last bind. */
async function demoAgents(manifests: string, standalone: LaunchedStandalone): Promise<DemoAgent[]> {
  const set = await loadManifests([manifests]);
  const roles = new Map(set.agents.map((a) => [`${a.namespace}/${a.name}`, a.spec.discussRole ?? ""]));
  const result = standalone.operator.reconciler.lastResult;
  if (!result) throw new KubemootError(ErrorCode.Internal, "demo: the operator has not bound the crew");
  const out: DemoAgent[] = [];
  for (const a of result.bind.agents) {
    const model = a.env[SETTINGS.staticModel.name];
    if (!model) continue;
    out.push({ key: a.key, role: roles.get(a.key) ?? "", model, candidates: a.candidates.mulling });
  }
  if (out.length === 0)
    throw new KubemootError(ErrorCode.InvalidManifest, "demo: no agent of the example crew could be bound");
  return out;
}
