// A thin uPlot wrapper for the web view's trend charts (docs/web-view.md): sized by its container,
// themed for the page, its x range set by the caller (the selected window), no legend of its own.
import uPlot from "uplot";
import { hhmm } from "./format.js";

export interface SeriesSpec {
  label: string;
  color: string;
  /** Fill under the line (single-series charts). */
  fill?: boolean;
}

export interface ChartSpec {
  series: SeriesSpec[];
  /** Y tick labels. */
  fmtY: (v: number) => string;
  /** Reports the data index under the cursor (null when it leaves), for the caller's legend. */
  onCursor?: (idx: number | null) => void;
}

const axisColor = "#8a97a8";
const gridColor = "rgba(138, 151, 168, 0.14)";

export class Chart {
  private readonly plot: uPlot;
  private readonly observer: ResizeObserver;
  private xRange: [number, number] = [0, 1];

  constructor(
    private readonly el: HTMLElement,
    spec: ChartSpec,
    data: uPlot.AlignedData,
    xRange: [number, number],
  ) {
    this.xRange = xRange;
    const axis = (values?: uPlot.Axis["values"], size?: number): uPlot.Axis => ({
      stroke: axisColor,
      grid: { stroke: gridColor, width: 1 },
      ticks: { stroke: gridColor, width: 1, size: 4 },
      font: "10px system-ui, sans-serif",
      gap: 3,
      ...(values ? { values } : {}),
      ...(size ? { size } : {}),
    });
    const opts: uPlot.Options = {
      ...this.size(),
      legend: { show: false },
      cursor: { points: { size: 5 }, drag: { x: false, y: false } },
      scales: {
        // The window is the caller's, not the data's: a quiet stretch shows as a gap, not a zoom.
        x: { time: true, range: () => this.xRange },
        y: { range: (_u, _min, max) => [0, max !== null && max > 0 ? max * 1.15 : 1] },
      },
      axes: [
        axis((_u, splits) => splits.map((s) => hhmm(s * 1000)), 22),
        axis((_u, splits) => splits.map((v) => spec.fmtY(v)), 44),
      ],
      series: [
        {},
        ...spec.series.map(
          (s): uPlot.Series => ({
            label: s.label,
            stroke: s.color,
            width: 1.5,
            points: { show: false },
            ...(s.fill ? { fill: s.color.replace(/, 1\)$/, ", 0.12)") } : {}),
          }),
        ),
      ],
      hooks: spec.onCursor ? { setCursor: [(u) => spec.onCursor?.(u.cursor.idx ?? null)] } : {},
    };
    this.plot = new uPlot(opts, data, el);
    this.observer = new ResizeObserver(() => this.plot.setSize(this.size()));
    this.observer.observe(el);
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(100, this.el.clientWidth), height: Math.max(60, this.el.clientHeight) };
  }

  setData(data: uPlot.AlignedData, xRange: [number, number]): void {
    this.xRange = xRange;
    this.plot.setData(data);
  }

  destroy(): void {
    this.observer.disconnect();
    this.plot.destroy();
  }
}
