import { describe, expect, it } from "vitest";
import { gpu } from "../../test/fleet/fixtures.js";
import { claims, matchMember } from "./match.js";
import type { Device, Member } from "./types.js";

const request = (name: string, count: number, selectors: string[] = []) => ({ name, count, selectors });
const member = (...devices: ReturnType<typeof request>[]): Member => ({ role: "Standalone", devices });
const nic: Device = gpu({
  name: "nic",
  driver: "dra.net",
  deviceClassName: "dra.net",
  count: 2,
  attributes: {},
});

describe("matchMember (rule 3)", () => {
  it.each<[string, Device[], Member, Record<string, number> | undefined]>([
    ["count 0 never matches", [gpu({ count: 0 })], member(request("g", 1)), undefined],
    ["too few devices", [gpu({ count: 2 })], member(request("g", 3)), undefined],
    ["a count that exactly fits", [gpu({ count: 3 })], member(request("g", 3)), { "gpu.nvidia.com": 3 }],
    [
      "two requests against one device of 1",
      [gpu({ count: 1 })],
      member(request("a", 1), request("b", 1)),
      undefined,
    ],
    [
      "two requests that exactly fit one device",
      [gpu({ count: 2 })],
      member(request("a", 1), request("b", 1)),
      { "gpu.nvidia.com": 2 },
    ],
    [
      "two kinds",
      [gpu(), nic],
      member(request("g", 2), request("n", 1, ['device.driver == "dra.net"'])),
      { "gpu.nvidia.com": 2, "dra.net": 1 },
    ],
    [
      "the first device in pool order with enough left",
      [gpu({ name: "small", count: 1 }), gpu({ name: "big", count: 4 })],
      member(request("g", 2)),
      { "gpu.nvidia.com": 2 },
    ],
    ["no selector match", [gpu()], member(request("g", 1, ["false"])), undefined],
  ])("%s", (_, devices, m, want) => {
    const r = matchMember(m, devices);
    expect(r?.claim).toEqual(want);
  });

  it("takes devices in order without backtracking", () => {
    // The first request takes the only 80Gi device; the second (which only fits it) finds nothing.
    const devices = [
      gpu({ name: "a", count: 1, capacity: { memory: "80Gi" } }),
      gpu({ name: "b", count: 1, capacity: { memory: "24Gi" } }),
    ];
    const big = 'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))';
    expect(matchMember(member(request("any", 1), request("big", 1, [big])), devices)).toBeUndefined();
    expect(matchMember(member(request("big", 1, [big]), request("any", 1)), devices)?.claim).toEqual({
      "gpu.nvidia.com": 2,
    });
  });

  it("Synthetic devices match but claim nothing", () => {
    const synthetic = gpu({ claim: "Synthetic", deviceClassName: "" });
    const r = matchMember(member(request("g", 1)), [synthetic]);
    expect(r).toEqual({ requests: [], claim: {} });
    expect(claims(r!)).toBe(false);
  });

  it("a member without nodeSelector matches and claims nothing", () => {
    const r = matchMember({ role: "Leader" }, []);
    expect(r).toEqual({ requests: [], claim: {} });
  });

  it("resolved requests name the device's class", () => {
    const r = matchMember(member(request("g", 2, ["true"])), [gpu({ deviceClassName: "h100.nvidia.com" })]);
    expect(r?.requests).toEqual([
      { name: "g", deviceClassName: "h100.nvidia.com", count: 2, selectors: ["true"] },
    ]);
  });
});
