// Single-slot models learned from a real emulator's /api/show over HTTP: asked once per model
// and digest, forgotten when the model goes, and a failed /api/show is asked again.
import { afterEach, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../emulator/index.js";
import { OllamaClient } from "../engines/index.js";
import { SingleSlotModels } from "./single-slot-models.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function setup() {
  const emulator: EmulatorHandle = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { "qwen3:8b": 4863, "nomic-embed-text": 262, "mxbai-embed-large": 640 },
    numParallel: 4,
  });
  const client = new OllamaClient({ baseUrl: emulator.url, timeoutMs: 2000 });
  open.push(emulator, client);
  const asked: string[] = [];
  let failNext = false;
  const counting = {
    show: (model: string) => {
      asked.push(model);
      if (failNext) {
        failNext = false;
        return client.show(`${model}-missing`); // a real 404 from the emulator
      }
      return client.show(model);
    },
  };
  return { client, counting, asked, failOnce: () => (failNext = true) };
}

describe("single-slot models", () => {
  it("are the models without completion, asked once per digest", async () => {
    const { client, counting, asked } = await setup();
    const tags = await client.tags();
    const models = new SingleSlotModels();
    expect((await models.refresh(counting, tags)).sort()).toEqual([
      "mxbai-embed-large:latest",
      "nomic-embed-text:latest",
    ]);
    expect(asked.sort()).toEqual(["mxbai-embed-large:latest", "nomic-embed-text:latest", "qwen3:8b"]);
    asked.length = 0;
    expect((await models.refresh(counting, tags)).sort()).toEqual([
      "mxbai-embed-large:latest",
      "nomic-embed-text:latest",
    ]);
    expect(asked).toEqual([]);
    // A new digest (the model was pulled again) is asked about again.
    const changed = tags.map((t) => (t.name === "qwen3:8b" ? { ...t, digest: "sha256:other" } : t));
    await models.refresh(counting, changed);
    expect(asked).toEqual(["qwen3:8b"]);
    // A model that is gone is forgotten: listed again later, it is asked again.
    asked.length = 0;
    expect(
      await models.refresh(
        counting,
        changed.filter((t) => t.name !== "nomic-embed-text:latest"),
      ),
    ).toEqual(["mxbai-embed-large:latest"]);
    await models.refresh(counting, changed);
    expect(asked).toEqual(["nomic-embed-text:latest"]);
  });

  it("leaves a model whose /api/show failed out, and asks again next time", async () => {
    const { client, counting, asked, failOnce } = await setup();
    const tags = (await client.tags()).filter((t) => t.name === "nomic-embed-text:latest");
    const models = new SingleSlotModels();
    failOnce();
    expect(await models.refresh(counting, tags)).toEqual([]);
    expect(await models.refresh(counting, tags)).toEqual(["nomic-embed-text:latest"]);
    expect(asked).toEqual(["nomic-embed-text:latest", "nomic-embed-text:latest"]);
  });

  it("starts no new question once its budget has passed; the rest are asked next time", async () => {
    const { client, asked } = await setup();
    const slow = {
      show: async (model: string) => {
        asked.push(model);
        await new Promise((r) => setTimeout(r, 100));
        return client.show(model);
      },
    };
    // Eight models (five of them not on the emulator: a real 404 each), four asked at a time.
    const names = ["nomic-embed-text:latest", "qwen3:8b", "mxbai-embed-large:latest"];
    for (let i = 0; i < 5; i++) names.push(`other-${i}:latest`);
    const listed = names.map((name) => ({ name, digest: "d" }));
    const models = new SingleSlotModels();
    // Every question takes longer than the budget: only the first four start.
    expect(await models.refresh(slow, listed, 50)).toEqual([
      "nomic-embed-text:latest",
      "mxbai-embed-large:latest",
    ]);
    expect(asked).toEqual(names.slice(0, 4));
    asked.length = 0;
    // The four never asked, and other-0 again (its 404 left it unknown).
    await models.refresh(slow, listed);
    expect(asked.sort()).toEqual(names.slice(3).sort());
  });
});
