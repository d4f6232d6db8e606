// A real browser for the web view's tests (docs/web-view.md "Tests"): Debian's chromium, driven
// by playwright-core through its executablePath; nothing downloads a browser. The flags keep
// chromium off the network this machine does not have. A page watcher collects what must never
// happen on a page: console errors, failed requests, error answers.
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install chromium), as .ci/run does`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export interface PageProblems {
  consoleErrors: string[];
  failedRequests: string[];
  errorAnswers: string[];
  /** Forget what was seen so far (e.g. while a server is down on purpose). */
  clear(): void;
}

export function watchPage(page: Page): PageProblems {
  const p: PageProblems = {
    consoleErrors: [],
    failedRequests: [],
    errorAnswers: [],
    clear() {
      p.consoleErrors.length = 0;
      p.failedRequests.length = 0;
      p.errorAnswers.length = 0;
    },
  };
  page.on("console", (m) => {
    if (m.type() === "error") p.consoleErrors.push(m.text());
  });
  page.on("pageerror", (e) => p.consoleErrors.push(String(e)));
  page.on("requestfailed", (r) => {
    // A stream the page itself closes on navigation or teardown is not a failure.
    const why = r.failure()?.errorText ?? "";
    if (why !== "net::ERR_ABORTED") p.failedRequests.push(`${r.url()} ${why}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) p.errorAnswers.push(`${r.status()} ${r.url()}`);
  });
  return p;
}
