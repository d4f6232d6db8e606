// Device matching of one member on one pool (docs/rules/fleet.md rule 3): requests in order, each
// takes the first device in pool order with enough remaining count whose selectors all hold.
// No backtracking: a later request never makes an earlier one move.
import { selectorsHold } from "./cel.js";
import type { Device, Member, ReplicaDeviceRequest } from "./types.js";

export interface MemberMatch {
  /** Requests resolved to DRA devices (Synthetic matches claim nothing and are left out). */
  requests: ReplicaDeviceRequest[];
  /** Devices one pod claims, by driver. */
  claim: Record<string, number>;
}

/** The member's resolution on a pool's devices, or undefined when some request finds no device. */
export function matchMember(member: Member, devices: readonly Device[]): MemberMatch | undefined {
  const requests: ReplicaDeviceRequest[] = [];
  const claim: Record<string, number> = {};
  if (!member.devices) return { requests, claim };
  const taken = new Array<number>(devices.length).fill(0);
  for (const request of member.devices) {
    const i = devices.findIndex(
      (d, j) => d.count - taken[j]! >= request.count && selectorsHold(d, request.selectors),
    );
    if (i < 0) return undefined;
    taken[i]! += request.count;
    const device = devices[i]!;
    if (device.claim !== "DRA") continue;
    requests.push({
      name: request.name,
      deviceClassName: device.deviceClassName,
      count: request.count,
      selectors: [...request.selectors],
    });
    claim[device.driver] = (claim[device.driver] ?? 0) + request.count;
  }
  return { requests, claim };
}

/** A member claims when it resolves at least one DRA device. */
export function claims(m: MemberMatch): boolean {
  return m.requests.length > 0;
}
