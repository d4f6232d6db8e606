// Prints one plain closing line, "N passed, N failed[, N skipped]", after vitest's own summary,
// so that any CI reading the run's last lines sees the counts in a runner-neutral form.
import type { Reporter, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file that failed to load (or whose beforeAll threw: its tests are marked skipped)
      // must still count as a failure.
      if (
        mod.state() === "failed" &&
        ![...mod.children.allTests()].some((t) => t.result().state === "failed")
      ) {
        failed++;
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
  }
}
