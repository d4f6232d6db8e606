import { defineConfig } from "vitest/config";

// Unit tests sit beside the code (src/**, sidecar/**); integration tests that start real
// processes (nats-server, emulators, the sidecar) live under test/ and run in their own project
// with longer timeouts and no file parallelism, since this machine has two cores. The clients
// in other languages (Go, Python) need their toolchains, so they are a project of their own:
// `npm test` runs unit + integration (Node and nats-server only), `npm run test:clients` the rest.
const CLIENT_TESTS = ["test/clients/go.test.ts", "test/clients/python.test.ts"];

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
          exclude: CLIENT_TESTS,
          testTimeout: 120_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "clients",
          include: CLIENT_TESTS,
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
