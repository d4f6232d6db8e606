// `kubemoot-scheduler topology` as a process, on examples/topology and the fixtures beside this
// file. Run after a build (`npm test` builds first; or `npx tsc -p tsconfig.build.json`).
//
// The expectations are worked out by hand from docs/rules/topology.md on examples/topology (pods of
// 4 GPUs unless noted; gpu-a1-1 has 4 GPUs and 16 cpu taken by the bound notebook):
//   per-node 4-GPU pods: a1-1 1, a1-2 2, a2-* 2, a3-* 2, b1-1 2, b1-2 2, b2-2 2
//   (b1-3 is not Ready, b2-1 has an untolerated taint); racks a1 3, a2 4, a3 4, b1 4, b2 2;
//   blocks a 11, b 6.
//   ml/batch (3 CPU pods, unconstrained): the fullest node first: gpu-a1-1 (48 cpu → 6) takes 3.
//   ml/prefer-rack (5, rack preferred): no rack has 5 → blocks; the smallest with room is
//     block-b (6): rack-b1 4 (b1-1 2, b1-2 2), then rack-b2 1 (b2-2).
//   ml/serve-block (4, block required): block-a 11 vs block-b 1 → block-a; racks a2 4 and a3 4
//     tie as the smallest that fits → rack-a2 (path order): a2-1 2, a2-2 2.
//   ml/train-rack (2 × 8 GPUs, rack required): racks a1 1 (a1-2), a3 2 → rack-a3, one per node.
//   ml/wide-rack (2 × 8 GPUs): only rack-a1 has room for one → refused.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { type DryRunOutput, HOSTNAME, profileId } from "../../src/topology/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "kubemoot-scheduler.js");
const BLOCK = "topology.kubemoot.ai/block";
const RACK = "topology.kubemoot.ai/rack";
const GPU_PROFILE = profileId([BLOCK, RACK, HOSTNAME]);
const HOST_PROFILE = profileId([HOSTNAME]);

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, "topology", ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function dryRun(...args: string[]): DryRunOutput {
  const r = cli(...args, "--output", "json");
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as DryRunOutput;
}

const tmp = mkdtempSync(join(tmpdir(), "kubemoot-topology-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

beforeAll(() => {
  for (const src of [
    "src/cli/commands/topology.ts",
    "src/topology/admit.ts",
    "src/topology/manifests.ts",
    "src/topology/kueue.ts",
  ]) {
    const out = join(ROOT, "dist", src.replace(/\.ts$/, ".js"));
    if (!existsSync(out) || statSync(out).mtimeMs < statSync(join(ROOT, src)).mtimeMs) {
      throw new Error(
        `${relative(ROOT, out)} is missing or older than ${src}: run npx tsc -p tsconfig.build.json`,
      );
    }
  }
});

const hostsOf = (g: DryRunOutput["gangs"][string]) =>
  Object.fromEntries((g.assignment?.domains ?? []).map((d) => [d.values.at(-1), d.count]));

describe("topology on examples/topology", () => {
  let out: DryRunOutput;
  beforeAll(() => {
    out = dryRun("--manifests", "examples/topology");
  });

  it("reads the ConfigMap snapshot and gives every GPU node the block/rack/host profile", () => {
    expect(out.sources).toEqual({
      fabric: {
        ready: true,
        reason: "Accepted",
        message: "revision 2026-11-30.1: 11 of 11 selected node(s) described",
      },
    });
    expect(Object.keys(out.nodes)).toHaveLength(12);
    expect(out.nodes["cpu-1"]).toEqual({ levels: [HOSTNAME], profile: HOST_PROFILE });
    expect(HOST_PROFILE).toBe("fnv64-87bf574bea2a4f23");
    for (const [name, n] of Object.entries(out.nodes)) {
      if (name !== "cpu-1") expect(n).toEqual({ levels: [BLOCK, RACK, HOSTNAME], profile: GPU_PROFILE });
    }
  });

  it("admits the gangs as computed by hand, in key order", () => {
    expect(Object.keys(out.gangs)).toEqual([
      "ml/batch",
      "ml/prefer-rack",
      "ml/serve-block",
      "ml/train-rack",
      "ml/wide-rack",
    ]);
    expect(hostsOf(out.gangs["ml/batch"]!)).toEqual({ "gpu-a1-1": 3 });
    expect(hostsOf(out.gangs["ml/prefer-rack"]!)).toEqual({ "gpu-b1-1": 2, "gpu-b1-2": 2, "gpu-b2-2": 1 });
    expect(out.gangs["ml/prefer-rack"]!.message).toContain(
      `within ${BLOCK}=block-b (no ${RACK} domain had room)`,
    );
    expect(out.gangs["ml/serve-block"]).toEqual({
      admitted: true,
      assignment: {
        levels: [BLOCK, RACK, HOSTNAME],
        domains: [
          { values: ["block-a", "rack-a2", "gpu-a2-1"], count: 2 },
          { values: ["block-a", "rack-a2", "gpu-a2-2"], count: 2 },
        ],
      },
      message: `admitted in topology "kubemoot-${GPU_PROFILE}": 4 pod(s) within ${BLOCK}=block-a`,
    });
    expect(hostsOf(out.gangs["ml/train-rack"]!)).toEqual({ "gpu-a3-1": 1, "gpu-a3-2": 1 });
    expect(out.gangs["ml/wide-rack"]).toEqual({
      admitted: false,
      message:
        `topology "kubemoot-${GPU_PROFILE}" at level ${RACK} allows to fit only 1 out of 2 pod(s) ` +
        "(excluded nodes: 1 not Ready, 1 untolerated taint)",
    });
  });

  it("prints help with the flags", () => {
    const r = cli("--help");
    expect(r.code).toBe(0);
    for (const flag of ["--manifests DIR", "--output json", "--emit kueue", "--now ISO-TIME"])
      expect(r.stdout).toContain(flag);
  });
});

describe("topology --emit kueue", () => {
  type Obj = {
    apiVersion: string;
    kind: string;
    metadata: Record<string, unknown>;
    spec: Record<string, unknown>;
  };
  let r: ReturnType<typeof cli>;
  let objects: Obj[] = [];
  beforeAll(() => {
    r = cli("--manifests", "examples/topology", "--emit", "kueue");
    objects = parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Obj)
      .filter(Boolean);
  });
  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);

  it("renders a Topology per profile and flavors pinned to them", () => {
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(ofKind("Topology").map((t) => [t.apiVersion, t.metadata.name, t.spec])).toEqual([
      [
        "kueue.x-k8s.io/v1beta1",
        `kubemoot-${GPU_PROFILE}`,
        { levels: [{ nodeLabel: BLOCK }, { nodeLabel: RACK }, { nodeLabel: HOSTNAME }] },
      ],
      ["kueue.x-k8s.io/v1beta1", `kubemoot-${HOST_PROFILE}`, { levels: [{ nodeLabel: HOSTNAME }] }],
    ]);
    const flavors = ofKind("ResourceFlavor");
    expect(flavors.map((f) => f.spec)).toEqual([
      {
        nodeLabels: { "topology.kubemoot.ai/profile": HOST_PROFILE },
        topologyName: `kubemoot-${HOST_PROFILE}`,
      },
      {
        nodeLabels: {
          "topology.kubemoot.ai/profile": GPU_PROFILE,
          "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        },
        topologyName: `kubemoot-${GPU_PROFILE}`,
      },
    ]);
    for (const f of flavors) expect(f.apiVersion).toBe("kueue.x-k8s.io/v1beta1");
  });

  it("renders the ClusterQueue with every flavor covering every resource, quotas summed", () => {
    const [cq] = ofKind("ClusterQueue");
    const groups = cq!.spec.resourceGroups as {
      coveredResources: string[];
      flavors: { name: string; resources: { name: string; nominalQuota: string }[] }[];
    }[];
    expect(groups).toHaveLength(1);
    expect(groups[0]!.coveredResources).toEqual(["cpu", "memory", "nvidia.com/gpu", "pods"]);
    const names = ofKind("ResourceFlavor").map((f) => f.metadata.name);
    expect(groups[0]!.flavors.map((f) => f.name)).toEqual(names);
    for (const f of groups[0]!.flavors)
      expect(f.resources.map((x) => x.name)).toEqual(groups[0]!.coveredResources);
    const gpuFlavor = groups[0]!.flavors.find((f) => f.name.includes("h100"))!;
    // 11 nodes × (64 cpu, 512Gi, 8 GPUs, 110 pods)
    expect(gpuFlavor.resources).toEqual([
      { name: "cpu", nominalQuota: "704" },
      { name: "memory", nominalQuota: String(11 * 512 * 2 ** 30) },
      { name: "nvidia.com/gpu", nominalQuota: "88" },
      { name: "pods", nominalQuota: "1210" },
    ]);
    expect(ofKind("LocalQueue").map((q) => [q.metadata.namespace, q.spec.clusterQueue])).toEqual([
      ["ml", "kubemoot"],
    ]);
  });

  it("labels the Nodes with their profile and the snapshot's levels, and queues the gangs' pods", () => {
    const features = ofKind("NodeFeature");
    expect(features).toHaveLength(12);
    const a11 = features.find((f) => f.metadata.name === "kubemoot-topology-gpu-a1-1")!;
    expect(a11.spec).toEqual({
      labels: { "topology.kubemoot.ai/profile": GPU_PROFILE, [BLOCK]: "block-a", [RACK]: "rack-a1" },
    });
    const pods = ofKind("Pod") as unknown as {
      metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
    }[];
    expect(pods).toHaveLength(16);
    for (const p of pods) {
      expect(p.metadata.labels["kueue.x-k8s.io/queue-name"]).toBe("kubemoot");
      expect(p.metadata.annotations["kueue.x-k8s.io/pod-group-total-count"]).toMatch(/^[1-9]$/);
    }
    const train = pods.find((p) => p.metadata.name === "train-rack-0")!;
    expect(train.metadata.annotations["kueue.x-k8s.io/podset-required-topology"]).toBe(RACK);
  });
});

describe("joint admission of a ModelDeployment's engines", () => {
  const fixture = join("test", "topology", "deployment");

  it("holds the engine that fits while the set is Pending", () => {
    const out = dryRun("--manifests", fixture, "--now", "2026-11-30T12:10:00Z");
    expect(out.gangs["llm/split-0-prefill"]).toMatchObject({
      admitted: false,
      assignment: { domains: [{ values: ["rack-1", "r1-a"], count: 1 }] },
      message: "Pending: fits and holds its reservation while the set waits for llm/split-0-decode",
    });
    expect(out.gangs["llm/split-0-decode"]!.message).toMatch(
      /^Pending: .*allows to fit only 2 out of 3 pod\(s\)$/,
    );
  });

  it("parks the set after 30 minutes", () => {
    const out = dryRun("--manifests", fixture, "--now", "2026-11-30T12:30:00Z");
    expect(out.gangs["llm/split-0-prefill"]).toEqual({
      admitted: false,
      message: "Parked: the set llm/split-0 has not assembled in 30 minutes; reservation released",
    });
  });
});

describe("invalid input", () => {
  it("names the file, object and field of an invalid manifest", () => {
    const file = join(tmp, "bad.yaml");
    writeFileSync(
      file,
      [
        "apiVersion: kubemoot.ai/v1alpha1",
        "kind: TopologySource",
        "metadata: {name: bad}",
        "spec:",
        "  nodeSelector: {}",
        "  levels: [kubernetes.io/hostname]",
        "  nodeLabels: {}",
      ].join("\n"),
    );
    const r = cli("--manifests", file);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `kubemoot-scheduler topology: invalid manifest: ${file} (document 1, TopologySource bad): ` +
        "spec.levels[0]: kubernetes.io/hostname is implicit and must not be listed\n",
    );
  });

  it("refuses a profile whose existing Kueue Topology has drifted", () => {
    const dir = join(tmp, "drift");
    cpSync(join(ROOT, "examples", "topology"), dir, { recursive: true });
    writeFileSync(
      join(dir, "old-topology.yaml"),
      [
        "apiVersion: kueue.x-k8s.io/v1beta1",
        "kind: Topology",
        `metadata: {name: kubemoot-${GPU_PROFILE}}`,
        "spec:",
        "  levels: [{nodeLabel: topology.kubernetes.io/zone}, {nodeLabel: kubernetes.io/hostname}]",
      ].join("\n"),
    );
    for (const extra of [[], ["--emit", "kueue"]]) {
      const r = cli("--manifests", dir, ...extra);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`ProfileDrift: profile ${GPU_PROFILE}: the existing hierarchy has levels`);
    }
  });

  it("rejects bad flags", () => {
    expect(cli("--manifests", "examples/topology", "--emit", "volcano").stderr).toContain(
      '--emit: only kueue is supported, got "volcano"',
    );
    expect(cli("--manifests", "examples/topology", "--now", "yesterday").code).toBe(2);
    expect(cli().stderr).toContain("--manifests: required");
  });
});
