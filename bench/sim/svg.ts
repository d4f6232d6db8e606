// Hand-written SVG of latency distributions: one panel per scenario, one empirical CDF line per
// policy (log-scaled latency axis), plus the service time alone ("ideal") as a dashed line.

export interface Series {
  label: string;
  /** Ascending sample (s). */
  sorted: readonly number[];
  dashed?: boolean;
}

export interface Panel {
  title: string;
  series: Series[];
}

const COLORS: Record<string, string> = {
  ours: "#d62728",
  static: "#1f77b4",
  "round-robin": "#ff7f0e",
  "least-busy": "#2ca02c",
  random: "#9467bd",
  ideal: "#555555",
};

const W = 960;
const PANEL_H = 280;
const M = { left: 70, right: 170, top: 34, bottom: 42 };
const TICKS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function fmt(n: number): string {
  return (Math.round(n * 10) / 10).toString();
}

/** Up to `max` points of a CDF (quantile steps), always keeping the last. */
function cdfPoints(sorted: readonly number[], max = 400): Array<[number, number]> {
  const n = sorted.length;
  if (n === 0) return [];
  const step = Math.max(1, Math.floor(n / max));
  const pts: Array<[number, number]> = [];
  for (let i = 0; i < n; i += step) pts.push([sorted[i]!, (i + 1) / n]);
  if (pts[pts.length - 1]![1] !== 1) pts.push([sorted[n - 1]!, 1]);
  return pts;
}

export function renderSvg(panels: readonly Panel[], caption: string): string {
  const H = panels.length * PANEL_H + 40;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${W / 2}" y="${H - 12}" text-anchor="middle" fill="#444">${esc(caption)}</text>`);
  panels.forEach((panel, pi) => {
    const y0 = pi * PANEL_H;
    const pw = W - M.left - M.right;
    const ph = PANEL_H - M.top - M.bottom;
    let lo = Number.POSITIVE_INFINITY;
    let hi = 0;
    for (const s of panel.series) {
      if (s.sorted.length === 0) continue;
      lo = Math.min(lo, s.sorted[0]!);
      hi = Math.max(hi, s.sorted[s.sorted.length - 1]!);
    }
    if (!Number.isFinite(lo)) {
      lo = 1;
      hi = 10;
    }
    const xmin = Math.log10(Math.max(0.1, lo * 0.9));
    const xmax = Math.log10(Math.max(hi * 1.1, 10 ** xmin * 10));
    const sx = (v: number) =>
      M.left + ((Math.min(xmax, Math.max(xmin, Math.log10(Math.max(v, 1e-3)))) - xmin) / (xmax - xmin)) * pw;
    const sy = (p: number) => y0 + M.top + (1 - p) * ph;
    out.push(`<g>`);
    out.push(
      `<text x="${M.left}" y="${y0 + 20}" font-size="14" font-weight="bold" fill="#222">${esc(panel.title)}</text>`,
    );
    out.push(
      `<rect x="${M.left}" y="${y0 + M.top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`,
    );
    for (const t of TICKS) {
      const lt = Math.log10(t);
      if (lt < xmin || lt > xmax) continue;
      const x = sx(t);
      out.push(
        `<line x1="${fmt(x)}" y1="${y0 + M.top}" x2="${fmt(x)}" y2="${y0 + M.top + ph}" stroke="#eee"/>`,
      );
      out.push(
        `<text x="${fmt(x)}" y="${y0 + M.top + ph + 16}" text-anchor="middle" fill="#444">${t}</text>`,
      );
    }
    for (const p of [0, 0.25, 0.5, 0.75, 0.95, 1]) {
      const y = sy(p);
      const dash = p === 0.95 ? ` stroke-dasharray="4 3" stroke="#bbb"` : ` stroke="#eee"`;
      out.push(`<line x1="${M.left}" y1="${fmt(y)}" x2="${M.left + pw}" y2="${fmt(y)}"${dash}/>`);
      out.push(`<text x="${M.left - 6}" y="${fmt(y + 4)}" text-anchor="end" fill="#444">${p}</text>`);
    }
    out.push(
      `<text x="${M.left + pw / 2}" y="${y0 + PANEL_H - 8}" text-anchor="middle" fill="#444">call latency, arrival → completion (s, log scale)</text>`,
    );
    out.push(
      `<text transform="translate(${M.left - 46} ${y0 + M.top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#444">fraction of calls ≤ x</text>`,
    );
    panel.series.forEach((s, si) => {
      const color = COLORS[s.label] ?? "#000";
      const pts = cdfPoints(s.sorted)
        .map(([x, p]) => `${fmt(sx(x))},${fmt(sy(p))}`)
        .join(" ");
      if (pts !== "") {
        const dash = s.dashed ? ` stroke-dasharray="6 4"` : "";
        out.push(
          `<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="${s.label === "ours" ? 2.5 : 1.5}"${dash}/>`,
        );
      }
      const ly = y0 + M.top + 14 + si * 18;
      const lx = M.left + pw + 14;
      out.push(
        `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="${color}" stroke-width="2.5"${s.dashed ? ` stroke-dasharray="6 4"` : ""}/>`,
      );
      out.push(`<text x="${lx + 28}" y="${ly}" fill="#222">${esc(s.label)}</text>`);
    });
    out.push(`</g>`);
  });
  out.push(`</svg>`);
  return `${out.join("\n")}\n`;
}
