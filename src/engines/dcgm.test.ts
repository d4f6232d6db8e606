import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../emulator/index.js";
import { parseDcgmMetrics, readDcgmFramebuffer } from "./dcgm.js";
import { EngineError } from "./errors.js";

describe("parseDcgmMetrics", () => {
  it("sums framebuffer series over GPUs", () => {
    const text = [
      "# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).",
      "# TYPE DCGM_FI_DEV_FB_FREE gauge",
      'DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a",device="nvidia0"} 20000',
      'DCGM_FI_DEV_FB_FREE{gpu="1",UUID="GPU-b",device="nvidia1"} 10000',
      'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",device="nvidia0"} 4563',
      'DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",device="nvidia1"} 14563',
      'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 99',
    ].join("\n");
    // No _TOTAL series: used + free.
    expect(parseDcgmMetrics(text)).toEqual({ totalMiB: 49_126, usedMiB: 19_126, freeMiB: 30_000, gpus: 2 });
    expect(
      parseDcgmMetrics(`${text}\nDCGM_FI_DEV_FB_TOTAL{gpu="0"} 24563\nDCGM_FI_DEV_FB_TOTAL{gpu="1"} 24563`),
    ).toMatchObject({
      totalMiB: 49_126,
    });
    expect(
      parseDcgmMetrics("DCGM_FI_DEV_FB_USED 10\nDCGM_FI_DEV_FB_FREE 5\nDCGM_FI_DEV_FB_RESERVED 1"),
    ).toMatchObject({
      totalMiB: 16,
      gpus: 1,
    });
    expect(parseDcgmMetrics("# nothing here\nup 1")).toBeUndefined();
  });
});

describe("readDcgmFramebuffer", () => {
  let emu: EmulatorHandle;
  beforeAll(async () => {
    emu = await startEmulator({ listen: "127.0.0.1:0", vramMiB: 24_563, dcgm: true, timeScale: 0.001 });
  });
  afterAll(async () => {
    await emu.close();
  });

  it("reads the emulator's /metrics", async () => {
    expect(await readDcgmFramebuffer(`${emu.url}/metrics`)).toEqual({
      totalMiB: 24_563,
      usedMiB: 0,
      freeMiB: 24_563,
      gpus: 1,
    });
  });

  it("a page without framebuffer series is a protocol error; a 404 an http error", async () => {
    await expect(readDcgmFramebuffer(`${emu.url}/`)).rejects.toMatchObject({ kind: "protocol" });
    const err = await readDcgmFramebuffer(`${emu.url}/nothing`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ kind: "http", status: 404 });
  });
});
