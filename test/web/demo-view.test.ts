// What `npm start` shows in a browser (docs/web-view.md, issue 33 "Interface"): the demo as a real
// process prints its web view's URL; in chromium the view names the demo's cards (RTX 5090, RTX
// 4090), shows the models placed on them and the decisions of the crew's traffic, answers
// every route's POST with 405, and is screenshotted at 1280×800 (into docs/img/ with
// UPDATE_SCREENSHOT=1, which is how the README's image is made).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, expect, it } from "vitest";
import { launchChromium, watchPage } from "../helpers/browser.js";
import { assertBuilt, repoRoot } from "../helpers/sidecar-process.js";

let demo: ChildProcess | undefined;
let browser: Browser | undefined;
const tmp = mkdtempSync(path.join(os.tmpdir(), "kubemoot-shot-"));

afterAll(async () => {
  await browser?.close();
  if (demo && demo.exitCode === null) demo.kill("SIGKILL");
  rmSync(tmp, { recursive: true, force: true });
});

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(file: string): [number, number] {
  const b = readFileSync(file);
  expect(b.subarray(1, 4).toString("ascii")).toBe("PNG");
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

it("npm start prints the view's URL; the view shows the demo's cards by name and what was placed", async () => {
  assertBuilt();
  demo = spawn(
    process.execPath,
    [
      path.join(repoRoot, "bin/kubemoot-scheduler.js"),
      "demo",
      "--duration",
      "90",
      "--speed",
      "20",
      "--seed",
      "3",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  demo.stdout!.on("data", (d) => {
    out += d;
  });
  demo.stderr!.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => demo!.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no web view URL printed:\n${out}`)), 30_000);
    demo!.stdout!.on("data", () => {
      const m = /web view on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
  });

  // Read-only: every route answers POST with 405, an unknown one 404.
  for (const route of ["", "api/snapshot", "api/events", "api/decisions", "api/trends", "healthz"]) {
    const res = await fetch(`${url}${route}`, { method: "POST", body: "{}" });
    expect(res.status, route).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
  }
  expect((await fetch(`${url}nowhere`)).status).toBe(404);

  browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems = watchPage(page);
  await page.goto(url);
  await expect
    .poll(() => page.getByTestId("provider-label").allTextContents(), { timeout: 15_000 })
    .toEqual(["RTX 5090", "RTX 4090"]);
  // The crew's calls: placements stream in and models show on the cards' bars.
  await page.locator("[data-testid=decision-row][data-kind=placed]").first().waitFor({ timeout: 20_000 });
  const placed = await page
    .locator("[data-testid=decision-row][data-kind=placed]")
    .evaluateAll((els) => els.map((e) => e.getAttribute("data-model")));
  await expect
    .poll(
      () =>
        page
          .locator("[data-testid=vram-seg][data-kind=resident]")
          .evaluateAll((els) => els.map((e) => e.getAttribute("data-model"))),
      { timeout: 20_000 },
    )
    .toEqual(expect.arrayContaining([placed[0]]));
  // Let a few trend steps close, so the picture has its charts.
  await page.waitForTimeout(16_000);
  const file =
    process.env.UPDATE_SCREENSHOT === "1"
      ? path.join(repoRoot, "docs/img/web-view.png")
      : path.join(tmp, "web-view.png");
  await page.screenshot({ path: file });
  expect(pngSize(file)).toEqual([1280, 800]);
  expect(problems.consoleErrors).toEqual([]);
  expect(problems.failedRequests).toEqual([]);
  expect(problems.errorAnswers).toEqual([]);
  await page.close();

  demo.kill("SIGINT");
  expect(await exited, out).toBe(0);
  expect(out).toMatch(/summary: calls \d+/);
}, 120_000);
