// The web view's live model and its browsers (docs/web-view.md "Live by design"). It follows the
// shared state the scheduler reads: it refreshes the fleet and tickets when the capacity watch
// says a provider state or ticket changed (at most every `refreshMinMs`), the demand when a
// decision arrives or a trend step closes, and takes the sidecars' decision records from the
// message bus. Each browser gets a snapshot on connecting, then only changes. A browser whose
// unsent backlog passes `maxBufferedBytes` is dropped; its EventSource reconnects and gets a
// fresh snapshot, so nobody is buffered without bound.
import type { ServerResponse } from "node:http";
import type { Logger } from "../log/index.js";
import type { StateStore } from "../state/index.js";
import { DECISIONS_SUBJECT, decodeRecord } from "./decision-record.js";
import { DecisionSampler } from "./decision-sampler.js";
import { demandView } from "./demand-view.js";
import { providerCards, ticketRows } from "./fleet-view.js";
import { TREND_STEP_MS, Trends } from "./trends.js";
import type {
  CallStory,
  DecisionRecord,
  DemandView,
  ProviderCard,
  TicketRow,
  ViewEvents,
  ViewSnapshot,
} from "./view-types.js";

export interface ViewHubOptions {
  state: StateStore;
  logger: Logger;
  now?: () => number;
  /** Browsers following at once; more get 503. Default 64. */
  maxClients?: number;
  /** A browser's unsent backlog (bytes) before it is dropped. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** Least time between two fleet refreshes (ms). Default 250. */
  refreshMinMs?: number;
  /** Trend step (ms). Default 5000. */
  stepMs?: number;
  /** A provider's GPU name, when known (the operator's ModelProvider labels). */
  labelOf?: (provider: string) => string | undefined;
  /**
   * Decisions pushed to browsers per second at most (default 50): a fleet's records beyond it
   * still count in the trends and the calls' stories, and show in the next snapshot.
   */
  maxDecisionsPerS?: number;
  /** The trace link template every snapshot carries (checked by the server); absent = none. */
  traceUrl?: string;
}

/** Decisions kept for the stream and for a call's story. */
const MAX_DECISIONS = 200;
const MAX_CALLS = 2000;
const MAX_RECORDS_PER_CALL = 8;
const KEEPALIVE_MS = 15_000;

export class ViewHub {
  private readonly now: () => number;
  private readonly clients = new Set<ServerResponse>();
  private readonly decisions: DecisionRecord[] = [];
  private readonly calls = new Map<string, DecisionRecord[]>();
  private readonly trends: Trends;
  private providers: ProviderCard[] = [];
  private tickets: TicketRow[] = [];
  private demand: DemandView = { models: [], crews: [], refusals: [] };
  private sent = { fleet: "", tickets: "", demand: "" };
  private readonly abort = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  private demandPending = false;
  private readonly pushes: DecisionSampler;
  /** Records dropped as malformed (a counter for the logs). */
  dropped = 0;

  constructor(private readonly o: ViewHubOptions) {
    this.now = o.now ?? Date.now;
    this.trends = new Trends(this.now(), o.stepMs ?? TREND_STEP_MS);
    this.pushes = new DecisionSampler(o.maxDecisionsPerS ?? 50, this.now);
  }

  async start(): Promise<void> {
    this.unsubscribe = this.o.state.kv.messages.subscribe(`${DECISIONS_SUBJECT}.>`, (_subject, data) =>
      this.onRecord(data),
    );
    await this.refreshFleet().catch(() => undefined);
    await this.refreshDemand().catch(() => undefined);
    void this.follow();
    const step = this.o.stepMs ?? TREND_STEP_MS;
    this.timers.push(setInterval(() => this.onStep(), Math.min(step, 1000)).unref());
    this.timers.push(setInterval(() => this.keepalive(), KEEPALIVE_MS).unref());
  }

  close(): void {
    this.abort.abort();
    this.unsubscribe?.();
    for (const t of this.timers) clearInterval(t);
    for (const c of this.clients) c.end();
    this.clients.clear();
  }

  get clientCount(): number {
    return this.clients.size;
  }

  snapshot(): ViewSnapshot {
    return {
      v: 1,
      at: this.now(),
      store: { kind: this.o.state.kind, available: this.o.state.available },
      providers: this.providers,
      tickets: this.tickets,
      decisions: this.decisions,
      demand: this.demand,
      trends: this.trends.series(),
      ...(this.o.traceUrl ? { traceUrl: this.o.traceUrl } : {}),
    };
  }

  recentDecisions(limit: number, kind?: DecisionRecord["kind"]): DecisionRecord[] {
    const list = kind === undefined ? this.decisions : this.decisions.filter((d) => d.kind === kind);
    return list.slice(0, limit);
  }

  trendSeries(minutes: number) {
    return this.trends.series(minutes * 60_000);
  }

  call(id: string): CallStory | undefined {
    const records = this.calls.get(id);
    return records === undefined ? undefined : { id, records };
  }

  /** Starts an event stream on `res`; false when the view already follows as many browsers as it may. */
  attach(res: ServerResponse, headers: Record<string, string>): boolean {
    if (this.clients.size >= (this.o.maxClients ?? 64)) return false;
    res.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    });
    res.write("retry: 2000\n\n");
    this.clients.add(res);
    res.on("close", () => this.clients.delete(res));
    this.write(res, frame("snapshot", this.snapshot()));
    return true;
  }

  private emit<K extends keyof ViewEvents>(event: K, data: ViewEvents[K]): void {
    if (this.clients.size === 0) return;
    const f = frame(event, data);
    for (const c of this.clients) this.write(c, f);
  }

  private write(c: ServerResponse, f: string): void {
    if (c.writableLength > (this.o.maxBufferedBytes ?? 1024 * 1024)) {
      // Fallen behind: drop it; its EventSource reconnects and starts from a snapshot.
      this.clients.delete(c);
      c.destroy();
      return;
    }
    c.write(f);
  }

  private keepalive(): void {
    for (const c of this.clients) this.write(c, ": keepalive\n\n");
  }

  private onRecord(data: Uint8Array): void {
    const r = decodeRecord(data);
    if (r === undefined) {
      this.dropped++;
      return;
    }
    this.decisions.unshift(r);
    if (this.decisions.length > MAX_DECISIONS) this.decisions.length = MAX_DECISIONS;
    let story = this.calls.get(r.id);
    if (story === undefined) {
      story = [];
      this.calls.set(r.id, story);
      if (this.calls.size > MAX_CALLS) this.calls.delete(this.calls.keys().next().value as string);
    }
    if (story.length < MAX_RECORDS_PER_CALL) story.push(r);
    this.trends.record(r);
    if (this.pushes.take("decision") !== undefined) this.emit("decision", r);
    this.scheduleDemand();
  }

  private onStep(): void {
    for (const point of this.trends.tick(this.now())) this.emit("trend", point);
    this.scheduleDemand();
  }

  private scheduleDemand(): void {
    if (this.demandPending) return;
    this.demandPending = true;
    setTimeout(() => {
      this.demandPending = false;
      this.refreshDemand().catch(() => undefined);
    }, this.o.refreshMinMs ?? 250).unref();
  }

  /** Follows the capacity watch: a refresh per change, at most every refreshMinMs. */
  private async follow(): Promise<void> {
    const { capacity } = this.o.state;
    let counter = capacity.counter;
    const minMs = this.o.refreshMinMs ?? 250;
    while (!this.abort.signal.aborted) {
      const r = await capacity.awaitChange(counter, this.now() + 5000, this.abort.signal);
      if (r.kind === "aborted") return;
      counter = r.counter;
      if (r.kind === "unavailable") await sleep(1000, this.abort.signal);
      await this.refreshFleet().catch((err: unknown) =>
        this.o.logger.debug({ err }, "web: fleet refresh failed"),
      );
      await sleep(minMs, this.abort.signal);
    }
  }

  private async refreshFleet(): Promise<void> {
    const { state } = this.o;
    const [states, all] = await Promise.all([state.providers.fleet(), state.tickets.everything()]);
    const now = this.now();
    const providers = providerCards({
      states,
      tickets: all.tickets,
      residencies: all.residencies,
      suspects: all.suspects,
      ...(this.o.labelOf ? { labelOf: this.o.labelOf } : {}),
    });
    const tickets = ticketRows(all.tickets, now);
    this.trends.fleet(providers);
    this.providers = providers;
    this.tickets = tickets;
    const f = JSON.stringify(providers);
    if (f !== this.sent.fleet) {
      this.sent.fleet = f;
      this.emit("fleet", { at: now, providers });
    }
    const t = JSON.stringify(tickets);
    if (t !== this.sent.tickets) {
      this.sent.tickets = t;
      this.emit("tickets", { at: now, tickets });
    }
  }

  private async refreshDemand(): Promise<void> {
    const snap = await this.o.state.demand.snapshot();
    const demand = demandView(snap.entries, this.now(), this.trends.refusals());
    this.demand = demand;
    const d = JSON.stringify(demand);
    if (d !== this.sent.demand) {
      this.sent.demand = d;
      this.emit("demand", { at: this.now(), demand });
    }
  }
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
