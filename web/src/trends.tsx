// The trends panel of the web view (docs/web-view.md): four uPlot charts over the last 15, 30 or
// 60 minutes of the server's closed buckets, filtered here in the browser.
import "./trends.css";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type uPlot from "uplot";
import type { TrendPoint } from "../../src/web/view-types.js";
import { Chart, type SeriesSpec } from "./chart.js";
import { accent, providerColor } from "./colors.js";
import { seconds, tick } from "./format.js";

const windows = [15, 30, 60] as const;
type Minutes = (typeof windows)[number];

export function TrendWindow(props: { minutes: Minutes; onChange: (m: Minutes) => void }) {
  return (
    <div class="seg-buttons" title="Trend window">
      {windows.map((m) => (
        <button
          key={m}
          type="button"
          data-testid="trend-window"
          data-minutes={String(m)}
          aria-pressed={m === props.minutes}
          class={m === props.minutes ? "on" : ""}
          onClick={() => props.onChange(m)}
        >
          {m} min
        </button>
      ))}
    </div>
  );
}

export function useTrendWindow(): [Minutes, (m: Minutes) => void] {
  return useState<Minutes>(30);
}

export function Trends(props: { points: TrendPoint[]; stepMs: number; minutes: Minutes }) {
  const { points, stepMs, minutes } = props;
  const view = useMemo(() => {
    const last = points[points.length - 1];
    // The window ends where the newest closed bucket does; without points it is empty.
    const end = last ? last.t + stepMs : Date.now();
    const start = end - minutes * 60_000;
    const inWindow = points.filter((p) => p.t >= start);
    const providers = [...new Set(inWindow.flatMap((p) => Object.keys(p.vramMiB)))].sort();
    const x = inWindow.map((p) => p.t / 1000);
    const range: [number, number] = [start / 1000, end / 1000];
    return {
      range,
      calls: [x, inWindow.map((p) => p.callsPerS)] as uPlot.AlignedData,
      wait: [x, inWindow.map((p) => p.waitP95S)] as uPlot.AlignedData,
      loads: [
        x,
        inWindow.map((p) => p.loadsPerMin),
        inWindow.map((p) => p.unloadsPerMin),
      ] as uPlot.AlignedData,
      providers,
      vram: [
        x,
        ...providers.map((name) => inWindow.map((p) => p.vramMiB[name] ?? null)),
      ] as uPlot.AlignedData,
    };
  }, [points, stepMs, minutes]);

  // Keyed by the names, so that an equal provider list keeps its chart instead of building a new one.
  const providerKey = view.providers.join("\n");
  const vramSeries = useMemo(
    () =>
      providerKey
        ? providerKey.split("\n").map((name): SeriesSpec => ({ label: name, color: providerColor(name) }))
        : [],
    [providerKey],
  );

  return (
    <div class="trends">
      <TrendChart
        series="calls"
        title="Calls / s"
        specs={CALLS}
        data={view.calls}
        range={view.range}
        fmt={tick}
      />
      <TrendChart
        series="wait"
        title="p95 wait (s)"
        specs={WAIT}
        data={view.wait}
        range={view.range}
        fmt={tick}
        fmtValue={seconds}
      />
      <TrendChart
        series="loads"
        title="Loads · unloads / min"
        specs={LOADS}
        data={view.loads}
        range={view.range}
        fmt={tick}
      />
      <TrendChart
        series="vram"
        title="VRAM used (MiB)"
        specs={vramSeries}
        data={view.vram}
        range={view.range}
        fmt={(v) => String(Math.round(v))}
      />
    </div>
  );
}

const CALLS: SeriesSpec[] = [{ label: "calls/s", color: accent.calls, fill: true }];
const WAIT: SeriesSpec[] = [{ label: "p95 wait", color: accent.wait, fill: true }];
const LOADS: SeriesSpec[] = [
  { label: "loads", color: accent.loads },
  { label: "unloads", color: accent.unloads },
];

function TrendChart(props: {
  series: "calls" | "wait" | "loads" | "vram";
  title: string;
  specs: SeriesSpec[];
  data: uPlot.AlignedData;
  range: [number, number];
  /** Axis ticks. */
  fmt: (v: number) => string;
  /** The legend's figure; the tick format when absent. */
  fmtValue?: (v: number) => string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<Chart | null>(null);
  const [cursor, setCursor] = useState<number | null>(null);
  const { specs, data, range, fmt } = props;
  const fmtValue = props.fmtValue ?? fmt;

  // A new series list (a provider came or went) builds a new chart; new data only feeds it.
  useEffect(() => {
    if (!host.current) return;
    chart.current = new Chart(host.current, { series: specs, fmtY: fmt, onCursor: setCursor }, data, range);
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
  }, [specs]);

  useEffect(() => {
    chart.current?.setData(data, range);
  }, [data, range]);

  const xs = data[0];
  const idx = cursor ?? (xs.length ? xs.length - 1 : null);
  return (
    <figure class="trend">
      <figcaption>
        <span class="trend-title">{props.title}</span>
        <span class="trend-legend">
          {specs.map((s, i) => {
            const v = idx === null ? null : (data[i + 1]?.[idx] ?? null);
            return (
              <span key={s.label} class="trend-key">
                <span class="swatch line" style={{ background: s.color }} />
                {specs.length > 1 && <span class="muted">{s.label} </span>}
                <span class="num">{v === null || v === undefined ? "—" : fmtValue(v)}</span>
              </span>
            );
          })}
        </span>
      </figcaption>
      <div class="chart" ref={host} data-testid="trend-chart" data-series={props.series} />
    </figure>
  );
}
