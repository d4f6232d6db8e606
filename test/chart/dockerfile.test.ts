// The Dockerfile and the chart agree: the chart runs the image's entrypoint as the image's
// non-root user, and the image carries what the processes read at run time.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DEFAULT_INJECTION_OPTIONS } from "../../src/operator/webhook/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const values = parse(readFileSync(join(ROOT, "chart", "values.yaml"), "utf8")) as {
  image: { repository: string };
  operator: { podSecurityContext: { runAsUser: number; runAsNonRoot: boolean } };
};

describe("Dockerfile", () => {
  it("is multi-stage on Node 24 slim and ends as the non-root node user", () => {
    const froms = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    const lastUser = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].at(-1)?.[1];
    expect(lastUser).toBe("node");
    // The node user of the official images is uid 1000: what the chart and the sidecar run as.
    expect(values.operator.podSecurityContext.runAsUser).toBe(1000);
    expect(DEFAULT_INJECTION_OPTIONS.runAsUser).toBe(1000);
  });

  it("installs only production dependencies into the final image and runs the CLI", () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const entry = /^ENTRYPOINT\s+(\[.*\])$/m.exec(dockerfile)?.[1];
    const argv = JSON.parse(entry!) as string[];
    expect(argv[0]).toBe("node");
    expect(existsSync(join(ROOT, argv[1]!))).toBe(true);
  });

  it("builds the web view's page into dist/", () => {
    expect(dockerfile).toMatch(/^COPY web \.\/web$/m);
    expect(dockerfile).toMatch(/^RUN npx vite build --config web\/vite\.config\.ts/m);
  });

  it("copies what the processes read at run time", () => {
    for (const dir of ["dist", "bin", "proto", "node_modules", "package.json"]) {
      expect(dockerfile, dir).toMatch(new RegExp(`^COPY .*\\b${dir.replace(".", "\\.")}\\b`, "m"));
    }
    const ignored = readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n");
    for (const needed of ["src", "sidecar", "web", "proto", "bin", "package.json", "package-lock.json"]) {
      expect(ignored, needed).not.toContain(needed);
    }
  });

  it("is the image the chart and the sidecar default to", () => {
    expect(DEFAULT_INJECTION_OPTIONS.image.startsWith(`${values.image.repository}:`)).toBe(true);
  });
});
