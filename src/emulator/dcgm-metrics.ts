// A DCGM-exporter-style /metrics page for the emulated GPU: framebuffer total, used and free
// in MiB, in Prometheus text format, labelled like dcgm-exporter's series.
import type { GpuSnapshot } from "./gpu-types.js";

const SERIES: Array<[string, string, (s: GpuSnapshot) => number]> = [
  ["DCGM_FI_DEV_FB_TOTAL", "Total framebuffer memory (in MiB).", (s) => s.vramMiB],
  ["DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", (s) => s.usedMiB],
  ["DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", (s) => Math.max(0, s.freeMiB)],
];

export function renderDcgmMetrics(snapshot: GpuSnapshot, hostname: string, uuid: string): string {
  const labels = `gpu="0",UUID="${uuid}",device="nvidia0",modelName="Kubemoot Emulated GPU",Hostname="${hostname}"`;
  let out = "";
  for (const [name, help, value] of SERIES) {
    out += `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name}{${labels}} ${Math.round(value(snapshot))}\n`;
  }
  return out;
}
