import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { manifestFiles } from "../../manifests/index.js";
import { loadManifests, loadProviderStateFile, readManifests } from "./read.js";

const agent = (name: string) =>
  `apiVersion: kubemoot.ai/v1alpha1\nkind: Agent\nmetadata: { name: ${name}, namespace: crew }\nspec: {}\n`;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kubemoot-manifests-"));
  await mkdir(join(dir, "b", "nested"), { recursive: true });
  await mkdir(join(dir, ".hidden"));
  await writeFile(join(dir, "z.yaml"), agent("z"));
  await writeFile(join(dir, "a.yml"), `${agent("a1")}---\n${agent("a2")}`);
  await writeFile(
    join(dir, "b", "nested", "c.json"),
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap" }),
  );
  await writeFile(join(dir, "b", "state.JSON"), JSON.stringify({ "gpu-a": { ready: true } }));
  await writeFile(join(dir, "notes.txt"), "not a manifest");
  await writeFile(join(dir, ".hidden", "x.yaml"), "broken: [");
  await writeFile(join(dir, ".dot.yaml"), "broken: [");
  await symlink(dir, join(dir, "b", "loop"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("reading a manifests directory", () => {
  it("finds *.yaml, *.yml, *.json recursively, sorted, skipping hidden entries and following a loop once", async () => {
    const files = (await manifestFiles([dir])).map((f) => f.slice(dir.length + 1));
    expect(files).toEqual(["a.yml", "b/nested/c.json", "b/state.JSON", "z.yaml"]);
  });

  it("parses every document", async () => {
    const { set, issues } = await readManifests([dir]);
    expect(issues).toEqual([]);
    expect(set.agents.map((a) => a.name)).toEqual(["a1", "a2", "z"]);
    expect(set.providerStates.map((s) => s.name)).toEqual(["gpu-a"]);
    expect(set.skipped.map((s) => s.kind)).toEqual(["ConfigMap"]);
  });

  it("takes several paths, and a file named explicitly whatever its extension", async () => {
    // notes.txt, named explicitly, is read, and is not a manifest
    const { issues } = await readManifests([join(dir, "z.yaml"), join(dir, "notes.txt")]);
    expect(issues.map((i) => [i.file.slice(dir.length + 1), i.message])).toEqual([
      ["notes.txt", "not a Kubernetes object (no apiVersion and kind) and not provider state"],
    ]);
    const files = await manifestFiles([join(dir, "z.yaml"), join(dir, "b")]);
    // b/loop leads back to the top, whose a.yml was not read yet; z.yaml and b were
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual([
      "z.yaml",
      "b/loop/a.yml",
      "b/nested/c.json",
      "b/state.JSON",
    ]);
  });

  it("a missing path is an invalid argument", async () => {
    await expect(manifestFiles([join(dir, "nope")])).rejects.toSatisfy(
      (e) => KubemootError.is(e, ErrorCode.InvalidArgument) && String((e as Error).message).includes("nope"),
    );
  });

  it("loadManifests throws InvalidManifest naming the file and field", async () => {
    const bad = await mkdtemp(join(tmpdir(), "kubemoot-bad-"));
    try {
      await writeFile(
        join(bad, "m.yaml"),
        `${agent("ok")}---\napiVersion: kubemoot.ai/v1alpha1\nkind: Model\nmetadata: { name: m }\nspec: { model: x }\n`,
      );
      await expect(loadManifests([bad])).rejects.toMatchObject({
        code: ErrorCode.InvalidManifest,
        message: `invalid manifest: ${join(bad, "m.yaml")} (document 2, Model m): spec.providerRef: required`,
      });
    } finally {
      await rm(bad, { recursive: true, force: true });
    }
  });
});

describe("loadProviderStateFile", () => {
  it("reads a JSON object keyed by provider", async () => {
    const f = join(dir, "state-file.json");
    await writeFile(
      f,
      JSON.stringify({ "ollama-a": { ready: true, totalVramMiB: 32605, loadedModels: ["qwen3:32b"] } }),
    );
    const [s] = await loadProviderStateFile(f);
    expect(s).toMatchObject({
      name: "ollama-a",
      ready: true,
      totalVramMiB: 32605,
      loadedModels: ["qwen3:32b"],
      maxParallel: 0,
    });
  });

  it("names the file and field of a bad value", async () => {
    const f = join(dir, "bad-state.json");
    await writeFile(f, JSON.stringify([{ name: "a", totalVramMiB: "big" }]));
    await expect(loadProviderStateFile(f)).rejects.toMatchObject({
      code: ErrorCode.InvalidManifest,
      message: `invalid manifest: ${f} (document 1, provider state): [0].totalVramMiB: expected an integer ≥ 0, got "big"`,
    });
  });

  it("a missing file is an invalid argument", async () => {
    await expect(loadProviderStateFile(join(dir, "missing.json"))).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      field: "state",
    });
  });
});

describe("loadProviderStateFile refuses other documents", () => {
  it("a state file holding a Kubernetes object is an error", async () => {
    const f = join(dir, "mixed-state.yaml");
    await writeFile(f, `${agent("x")}---\n{"gpu-a": {"ready": true}}\n`);
    await expect(loadProviderStateFile(f)).rejects.toMatchObject({
      code: ErrorCode.InvalidManifest,
      message: `invalid manifest: ${f} (document 1): expected provider state only, found Kubernetes objects`,
    });
  });
});
