import { defineConfig } from "vitest/config";

// Unit tests sit beside the code (src/**, sidecar/**); integration tests that start real
// processes (nats-server, emulators, the sidecar) live under test/ and run in their own project
// with longer timeouts and no file parallelism, since this machine has two cores.
export default defineConfig({
  test: {
    reporters: ["default", "./test/summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "sidecar/**/*.test.ts", "bench/**/*.test.ts"],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
