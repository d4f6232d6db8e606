// Running placeFleet in its tests (src/fleet/place*.test.ts): each deployment's replicas as
// "cluster/index@pool" strings (members joined by "+", engines by ","), its first condition and
// how many replicas were retained; and the small fleets several cases share.
import { placeFleet } from "../../src/fleet/place.js";
import type { FleetInput, FleetOptions, Member } from "../../src/fleet/types.js";
import { cluster } from "./fixtures.js";

export function place(
  input: Partial<FleetInput>,
  options: FleetOptions = {},
): Record<string, { replicas: string[]; reason: string; message: string; retained: number }> {
  const result = placeFleet({ deployments: [], clusters: [], replicas: [], ...input }, options);
  const out: Record<string, { replicas: string[]; reason: string; message: string; retained: number }> = {};
  for (const d of result.deployments) {
    out[d.name] = {
      replicas: d.replicas.map(
        (r) =>
          `${r.clusterName}/${r.index}@${r.engines.map((e) => e.members.map((m) => m.nodePoolName).join("+")).join(",")}`,
      ),
      reason: d.conditions[0]!.reason,
      message: d.conditions[0]!.message,
      retained: d.replicas.filter((r) => r.retained).length,
    };
  }
  return out;
}

export const abc = ["a", "b", "c"].map((n) => cluster(n));
export const gang: Member[] = [
  { role: "Leader", devices: [{ name: "gpu", count: 8, selectors: [] }] },
  { role: "Worker", workerNodes: 1, devices: [{ name: "gpu", count: 8, selectors: [] }] },
];
export const H200 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"';
