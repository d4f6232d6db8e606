import { describe, expect, it } from "vitest";
import { gpu } from "../../test/fleet/fixtures.js";
import { compileSelector, selectorsHold } from "./cel.js";
import type { Device } from "./types.js";

const device: Device = gpu({
  attributes: {
    productName: { string: "NVIDIA H100 80GB HBM3" },
    driverVersion: { version: "550.54.15" },
    mig: { bool: false },
    cudaComputeCapability: { int: 9 },
    "dra.net/rdma": { bool: true },
  },
  capacity: { memory: "80Gi", "dra.net/bandwidth": "400G" },
});

const holds = (cel: string, d: Device = device) => selectorsHold(d, [cel]);

describe("DRA CEL on a device", () => {
  it.each([
    ['device.driver == "gpu.nvidia.com"', true],
    ['device.driver == "amd.com"', false],
    // a bare attribute key belongs to the driver's domain
    ['device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")', true],
    ['device.attributes["gpu.nvidia.com"].mig == false', true],
    ['device.attributes["gpu.nvidia.com"].cudaComputeCapability >= 9', true],
    // a fully qualified key keeps its own domain
    ['device.attributes["dra.net"].rdma', true],
    ['"rdma" in device.attributes["gpu.nvidia.com"]', false],
    ['device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) == 0', true],
    ['device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("141Gi")) < 0', true],
    ['device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))', true],
    ['device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("40Gi"))', false],
    ['device.capacity["gpu.nvidia.com"].memory == quantity("81920Mi")', true],
    ['device.capacity["dra.net"].bandwidth.isGreaterThan(quantity("100G"))', true],
    ['device.capacity["gpu.nvidia.com"].memory.asInteger() == 85899345920', true],
    ['device.capacity["gpu.nvidia.com"].memory.sub(quantity("16Gi")) == quantity("64Gi")', true],
    ['device.capacity["gpu.nvidia.com"].memory.add(1).isInteger()', true],
    ['quantity("1500m").asApproximateFloat() == 1.5', true],
    ['quantity("-1").sign() == -1', true],
    ['device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))', true],
    ['device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("560.1.0")) < 0', true],
    ['device.attributes["gpu.nvidia.com"].driverVersion.major() == 550', true],
    ['device.attributes["gpu.nvidia.com"].driverVersion == semver("550.54.15")', true],
    ['isQuantity("1Gi") && !isQuantity("1 Gi") && isSemver("1.0.0") && !isSemver("1.0")', true],
  ])("%s → %s", (cel, want) => {
    expect(holds(cel)).toBe(want);
  });

  it.each([
    ['device.attributes["gpu.nvidia.com"].missing == "x"', "a missing attribute"],
    ['device.attributes["amd.com"].productName == "x"', "a missing domain"],
    ['quantity("lots").isGreaterThan(quantity("1"))', "an invalid quantity"],
    [
      'device.capacity["gpu.nvidia.com"].memory.compareTo(semver("1.0.0")) > 0',
      "a quantity against a semver",
    ],
    ['device.attributes["gpu.nvidia.com"].productName', "a string result"],
    ["1", "an int result"],
  ])("%s is a non-match (%s)", (cel) => {
    expect(compileSelector(cel).ok).toBe(true);
    expect(holds(cel)).toBe(false);
  });

  it("all selectors must hold (AND)", () => {
    expect(selectorsHold(device, ['device.driver == "gpu.nvidia.com"', "false"])).toBe(false);
    expect(selectorsHold(device, ['device.driver == "gpu.nvidia.com"', "true"])).toBe(true);
    expect(selectorsHold(device, [])).toBe(true);
  });

  it("a selector that does not parse is a compile error, cached per expression", () => {
    const c = compileSelector('device.driver == "x" &&');
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.error).toMatch(/\S/);
    expect(compileSelector('device.driver == "x" &&')).toBe(c);
    const ok = compileSelector("true");
    expect(compileSelector("true")).toBe(ok);
  });

  it.each(["nosuchfunction(1)", 'device.driver.nosuchmethod("x")', "has(device.x) && frob(device.driver)"])(
    "an undeclared function is a compile error: %s",
    (cel) => {
      const c = compileSelector(cel);
      expect(c.ok).toBe(false);
      if (!c.ok) expect(c.error).toMatch(/undeclared function '(nosuchfunction|nosuchmethod|frob)'/);
    },
  );

  it("has the strings extension and the macros", () => {
    expect(holds('device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("h100")')).toBe(true);
    expect(holds('device.attributes["gpu.nvidia.com"].productName.split(" ").size() == 4')).toBe(true);
    expect(holds('has(device.attributes) && ["a", "b"].exists(x, x == "b")')).toBe(true);
    expect(holds('device.attributes["gpu.nvidia.com"].productName.matches("^NVIDIA H[0-9]+")')).toBe(true);
  });

  it("an unparsable published version stays a string and never compares", () => {
    const odd = gpu({ attributes: { driverVersion: { version: "550.54" } } });
    expect(holds('device.attributes["gpu.nvidia.com"].driverVersion == "550.54"', odd)).toBe(true);
    expect(
      holds('device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("1.0.0"))', odd),
    ).toBe(false);
  });
});
