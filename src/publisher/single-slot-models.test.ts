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
});
