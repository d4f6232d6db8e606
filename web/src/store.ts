// The web view's state and its one live feed, GET api/events (docs/web-view.md): a snapshot replaces
// everything (sent on every connection, so a reconnect resynchronises), the other events patch parts.
import { useEffect, useState } from "preact/hooks";
import type {
  DecisionRecord,
  DemandView,
  ProviderCard,
  TicketRow,
  TrendPoint,
  ViewEvents,
  ViewSnapshot,
} from "../../src/web/view-types.js";

export const MAX_DECISIONS = 200;
/** 60 minutes of 5 s buckets. */
export const MAX_POINTS = 720;

export type Conn = "connecting" | "live" | "reconnecting";

export interface ViewState {
  conn: Conn;
  /** Server clock at the last event that carried it, and Date.now() when that event arrived. */
  serverAt: number;
  receivedAt: number;
  store: ViewSnapshot["store"] | null;
  providers: ProviderCard[];
  tickets: TicketRow[];
  decisions: DecisionRecord[];
  demand: DemandView;
  stepMs: number;
  points: TrendPoint[];
  /** The trace link template the server was given ("" = none: trace ids show as text). */
  traceUrl: string;
}

let state: ViewState = {
  conn: "connecting",
  serverAt: 0,
  receivedAt: 0,
  store: null,
  providers: [],
  tickets: [],
  decisions: [],
  demand: { models: [], crews: [], refusals: [] },
  stepMs: 5000,
  points: [],
  traceUrl: "",
};
const listeners = new Set<() => void>();

export function getState(): ViewState {
  return state;
}

function update(patch: Partial<ViewState>): void {
  state = { ...state, ...patch };
  for (const l of listeners) l();
}

/** The server's clock now: its last reading plus the time elapsed here since. */
export function serverNow(s: ViewState, clientNow = Date.now()): number {
  return s.serverAt ? s.serverAt + (clientNow - s.receivedAt) : clientNow;
}

function clockAt(at: unknown): Partial<ViewState> {
  return typeof at === "number" && at > 0 ? { serverAt: at, receivedAt: Date.now() } : {};
}

function parse(data: unknown): unknown {
  if (typeof data !== "string") return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined; // A malformed event is dropped; the next snapshot repairs whatever it carried.
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function isDecision(v: unknown): v is DecisionRecord {
  return isObject(v) && typeof v.id === "string" && typeof v.kind === "string" && typeof v.at === "number";
}

function isPoint(v: unknown): v is TrendPoint {
  return isObject(v) && typeof v.t === "number" && isObject(v.vramMiB);
}

function isDemand(v: unknown): v is DemandView {
  return isObject(v) && Array.isArray(v.models) && Array.isArray(v.crews) && Array.isArray(v.refusals);
}

function onSnapshot(v: unknown): void {
  if (!isObject(v) || !Array.isArray(v.providers) || !Array.isArray(v.tickets)) return;
  if (!Array.isArray(v.decisions) || !isDemand(v.demand) || !isObject(v.trends)) return;
  const s = v as unknown as ViewSnapshot;
  const points = Array.isArray(s.trends.points) ? s.trends.points.filter(isPoint) : [];
  update({
    ...clockAt(s.at),
    conn: "live",
    store: s.store ?? null,
    providers: s.providers,
    tickets: s.tickets,
    decisions: s.decisions.filter(isDecision).slice(0, MAX_DECISIONS),
    demand: s.demand,
    stepMs: s.trends.stepMs > 0 ? s.trends.stepMs : 5000,
    points: points.slice(-MAX_POINTS),
    traceUrl: typeof s.traceUrl === "string" ? s.traceUrl : "",
  });
}

function onDecision(v: unknown): void {
  if (!isDecision(v)) return;
  // A record seen twice (the snapshot raced the event) is shown once.
  const dup = state.decisions.some((d) => d.id === v.id && d.kind === v.kind && d.at === v.at);
  if (dup) return;
  update({ decisions: [v, ...state.decisions].slice(0, MAX_DECISIONS) });
}

function onTrend(v: unknown): void {
  if (!isPoint(v)) return;
  const pts = state.points;
  const last = pts[pts.length - 1];
  let next: TrendPoint[];
  if (!last || v.t > last.t) next = [...pts, v];
  else if (v.t === last.t) next = [...pts.slice(0, -1), v];
  else return; // Older than what we hold: the snapshot already had it.
  update({ points: next.slice(-MAX_POINTS) });
}

type Handler = (v: unknown) => void;

const handlers: { [K in keyof ViewEvents]: Handler } = {
  snapshot: onSnapshot,
  fleet: (v) => {
    if (isObject(v) && Array.isArray(v.providers)) {
      update({ ...clockAt(v.at), providers: v.providers as ProviderCard[] });
    }
  },
  tickets: (v) => {
    if (isObject(v) && Array.isArray(v.tickets)) {
      update({ ...clockAt(v.at), tickets: v.tickets as TicketRow[] });
    }
  },
  demand: (v) => {
    if (isObject(v) && isDemand(v.demand)) update({ ...clockAt(v.at), demand: v.demand });
  },
  decision: onDecision,
  trend: onTrend,
};

/**
 * Opens the feed. EventSource retries by itself after a dropped connection; it gives up only when
 * an answer is not an event stream (a proxy's 502 while the server restarts), so then we open a
 * new one after a growing pause.
 */
export function connect(url = "api/events"): () => void {
  let es: EventSource | null = null;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let pause = 1000;
  let stopped = false;

  const open = (): void => {
    es = new EventSource(url);
    for (const [name, handle] of Object.entries(handlers)) {
      es.addEventListener(name, (e) => {
        handle(parse((e as MessageEvent).data));
        if (name === "snapshot") pause = 1000;
      });
    }
    es.onerror = () => {
      update({ conn: "reconnecting" });
      if (es && es.readyState === EventSource.CLOSED && !stopped) {
        es.close();
        retry = setTimeout(open, pause);
        pause = Math.min(pause * 2, 30_000);
      }
    };
  };
  open();
  return () => {
    stopped = true;
    clearTimeout(retry);
    es?.close();
  };
}

/** The current state; the component re-renders on every change. */
export function useViewState(): ViewState {
  const [s, set] = useState(state);
  useEffect(() => {
    const l = () => set(state);
    listeners.add(l);
    l();
    return () => {
      listeners.delete(l);
    };
  }, []);
  return s;
}

/** Server time, re-read every second so that ages and leases count without asking the server. */
export function useNow(s: ViewState): number {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, []);
  return serverNow(s);
}
