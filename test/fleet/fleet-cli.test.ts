// `kubemoot-scheduler fleet` as a process, on examples/fleet and on invalid manifests. Run
// after a build (`npm test` builds first; or `npx tsc -p tsconfig.build.json`).
//
// The expectations are worked out by hand from docs/rules/fleet.md over examples/fleet:
// - Deployments fill in name order: models/deepseek-r1, models/llama-8b, staging/qwen-7b.
// - Ledger first: mixtral's replica (its deployment is not in the bundle) holds 2 copies × 1
//   pod of us-east-1's l4 pool (no report: 2 whole nodes of 3). llama-8b's eu-central-1/0 is
//   retained (a not-Ready cluster keeps its replicas) and charged one whole h100 node there.
// - deepseek-r1: a Leader + 1 Worker, 8 GPUs each with more than 100Gi: only us-west-2's
//   h200-a and h200-b (141Gi, from the h200-141gb InferenceClass) match; each pool has 1 node,
//   so no single pool holds the 2-pod gang, but both declare block nvl-1 at the cluster's
//   fabricLevel: the Leader goes to h200-a and the Worker to h200-b.
// - llama-8b wants 3, has eu-central-1/0. Eligible: us-east-1 and us-west-2 (eu-central-1 is
//   not Ready; staging is not tier prod). Both host 0 → us-east-1 (by name), index 1, first
//   pool h100 (its report has an 8-free node). Then us-west-2 hosts 0 but both its pools are
//   full (deepseek took the whole nodes) → us-east-1 again, index 2, h100 (7 free on that node).
// - qwen-7b tolerates staging's NoSchedule taint; 2 copies × 1 GPU per replica on the l4 pool
//   whose report shows one 4-free node: two replicas share it exactly.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DryRunOutput } from "../../src/fleet/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "kubemoot-scheduler.js");

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, "fleet", ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function fleetJson(...args: string[]): DryRunOutput {
  const r = cli(...args, "--output", "json");
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as DryRunOutput;
}

/** `cluster/index@pool(+pool) gateway` per replica. */
function brief(out: DryRunOutput): Record<string, { replicas: string[]; condition: string }> {
  const r: Record<string, { replicas: string[]; condition: string }> = {};
  for (const [key, d] of Object.entries(out.deployments)) {
    r[key] = {
      replicas: d.replicas.map(
        (x) =>
          `${x.cluster}/${x.index}@${x.engines.map((e) => e.members.map((m) => m.pool).join("+")).join(",")} ${x.gateway}`,
      ),
      condition: d.conditions.map((c) => `${c.status} ${c.reason}: ${c.message}`).join("; "),
    };
  }
  return r;
}

beforeAll(() => {
  // A stale build would test old code: every source of the command must be older than its output.
  const sources = [
    "src/cli/commands/fleet.ts",
    "src/fleet/place.ts",
    "src/fleet/parse.ts",
    "src/fleet/capacity.ts",
  ];
  for (const src of sources) {
    const out = join(ROOT, "dist", src.replace(/\.ts$/, ".js"));
    if (!existsSync(out) || statSync(out).mtimeMs < statSync(join(ROOT, src)).mtimeMs) {
      throw new Error(
        `${relative(ROOT, out)} is missing or older than ${src}: run npx tsc -p tsconfig.build.json`,
      );
    }
  }
});

const LLAMA_SELECTOR = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("24Gi")) >= 0';
const DEEPSEEK_SELECTOR = 'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("100Gi"))';

describe("fleet on examples/fleet", () => {
  it("places the bundle as worked out by hand", () => {
    const out = fleetJson("--manifests", "examples/fleet");
    expect(brief(out)).toEqual({
      "models/deepseek-r1": {
        replicas: ["us-west-2/0@h200-a+h200-b 10.0.1.1"],
        condition: "True ReplicasScheduled: 1 of 1 replicas scheduled",
      },
      "models/llama-8b": {
        replicas: ["eu-central-1/0@h100 10.0.2.1", "us-east-1/1@h100 10.0.0.1", "us-east-1/2@h100 10.0.0.1"],
        condition: "True ReplicasScheduled: 3 of 3 replicas scheduled",
      },
      "staging/qwen-7b": {
        replicas: ["staging/0@l4 10.0.9.1", "staging/1@l4 10.0.9.1"],
        condition: "True ReplicasScheduled: 2 of 2 replicas scheduled",
      },
    });
  });

  it("prints the spec's shape: members with pool and device requests", () => {
    const out = fleetJson("--manifests", "examples/fleet");
    expect(out.deployments["models/deepseek-r1"]!.replicas[0]).toEqual({
      cluster: "us-west-2",
      index: 0,
      gateway: "10.0.1.1",
      engines: [
        {
          name: "main",
          members: [
            {
              role: "Leader",
              pool: "h200-a",
              deviceRequests: [
                { name: "gpu", deviceClassName: "gpu.nvidia.com", count: 8, selectors: [DEEPSEEK_SELECTOR] },
              ],
            },
            {
              role: "Worker",
              pool: "h200-b",
              deviceRequests: [
                { name: "gpu", deviceClassName: "gpu.nvidia.com", count: 8, selectors: [DEEPSEEK_SELECTOR] },
              ],
            },
          ],
        },
      ],
    });
    expect(out.deployments["models/llama-8b"]!.replicas[1]!.engines[0]!.members[0]!.deviceRequests).toEqual([
      { name: "gpu", deviceClassName: "gpu.nvidia.com", count: 1, selectors: [LLAMA_SELECTOR] },
    ]);
  });

  it("--no-fill keeps what exists and places nothing", () => {
    const out = fleetJson("--manifests", "examples/fleet", "--no-fill");
    expect(brief(out)).toEqual({
      "models/deepseek-r1": {
        replicas: [],
        condition: "False FillDisabled: 0 of 1 replicas scheduled (fill disabled)",
      },
      "models/llama-8b": {
        replicas: ["eu-central-1/0@h100 10.0.2.1"],
        condition: "False FillDisabled: 1 of 3 replicas scheduled (fill disabled)",
      },
      "staging/qwen-7b": {
        replicas: [],
        condition: "False FillDisabled: 0 of 2 replicas scheduled (fill disabled)",
      },
    });
  });

  it("skips other kinds: the binder's manifests beside the fleet's change nothing", () => {
    const alone = fleetJson("--manifests", "examples/fleet");
    expect(fleetJson("--manifests", "examples/prod", "--manifests", "examples/fleet")).toEqual(alone);
  });

  it("--help describes the command", () => {
    const r = cli("--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--no-fill");
    expect(r.stdout).toContain("examples/fleet");
  });
});

describe("fleet on invalid input", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "kubemoot-fleet-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const deployment = (replicas: number, cel: string) => `apiVersion: kubemoot.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: broken
  namespace: models
spec:
  replicas: ${replicas}
  template:
    spec:
      engines:
        - name: main
          members:
            - role: Standalone
              nodeSelector:
                devices:
                  - name: gpu
                    selectors:
                      - cel: ${JSON.stringify(cel)}
`;

  it("a value out of range exits 2 naming the file, the object and the field", () => {
    const file = join(dir, "range.yaml");
    writeFileSync(file, deployment(11, "true"));
    const r = cli("--manifests", file);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(file);
    expect(r.stderr).toContain("ModelDeployment models/broken");
    expect(r.stderr).toContain("spec.replicas: expected an integer in 1..10, got 11");
  });

  it("a selector that does not compile: InvalidNodeSelector in the output, the field on stderr, exit 1", () => {
    const sub = mkdtempSync(join(dir, "cel-"));
    writeFileSync(join(sub, "d.yaml"), deployment(1, 'device.driver == "x" &&'));
    const r = cli("--manifests", sub);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as DryRunOutput;
    expect(out.deployments["models/broken"]!.conditions[0]).toMatchObject({
      status: "False",
      reason: "InvalidNodeSelector",
    });
    expect(r.stderr).toContain("ModelDeployment models/broken");
    expect(r.stderr).toContain(
      "spec.template.spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel",
    );
  });

  it("a document that is not YAML exits 2 naming the file", () => {
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "kind: [unclosed\n");
    const r = cli("--manifests", file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
  });

  it.each([
    [["--manifests", "examples/fleet", "--output", "yaml"], "--output"],
    [[], "--manifests"],
    [["--manifests", "no/such/dir"], "no such file"],
  ])("bad flags %j exit 2", (args, text) => {
    const r = cli(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(text);
  });
});
