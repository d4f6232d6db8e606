// An Ollama embedding model runs with one slot whatever OLLAMA_NUM_PARALLEL says
// (docs/rules/ollama.md): the publisher learns it from the emulator's /api/show over HTTP, and the
// sidecar's scheduler then never places a second call on a busy embedding copy, while a chat
// model on the same 4-slot card takes four.
import { afterEach, describe, expect, it } from "vitest";
import { closeHarnesses, h, harness } from "../helpers/proxy-calls.js";

afterEach(closeHarnesses);

const EMBED = "nomic-embed-text:latest";
const CHAT = "qwen3:8b";

describe("embedding models get one slot", () => {
  it("a second call waits for the embedding copy's one slot; the chat copy takes four", async () => {
    await harness({
      providers: [
        {
          name: "gpu",
          vramMiB: 24_563,
          models: { [CHAT]: 4900, "nomic-embed-text": 262 },
          maxParallel: 4,
        },
      ],
    });
    const state = await h.state.providers.get("gpu");
    expect(state?.singleSlotModels).toEqual([EMBED]);
    const place = (model: string, i: number) =>
      h.scheduler.place({
        agent: "crew/tooler",
        threadId: `t${i}`,
        phase: "mulling",
        candidates: [{ model, score: 80 }],
        promptTokens: 10,
        promptChars: 40,
        maxOutputTokens: 10,
        cannotWait: false,
      });
    const first = await place(EMBED, 0);
    expect(first.kind).toBe("placed");
    const second = await place(EMBED, 1);
    expect(second.kind === "refused" ? second.refusal.reason : second.kind).toBe("gpu-busy");
    const chats = [];
    for (let i = 0; i < 4; i++) chats.push(await place(CHAT, 10 + i));
    expect(chats.map((c) => c.kind)).toEqual(["placed", "placed", "placed", "placed"]);
    expect((await place(CHAT, 20)).kind).toBe("refused");
    for (const p of [first, ...chats]) {
      if (p.kind !== "placed") continue;
      const done = { outcome: "unspecified" as const, latencyMs: 0, promptTokens: 0, promptChars: 0 };
      await h.scheduler.release({
        ticketId: p.placement.ticketId,
        ...done,
        outputTokens: 0,
        error: "",
        ran: false,
      });
    }
    expect(await h.tickets()).toEqual([]);
  });
});
