// An Ollama embedding model runs one call at a time whatever OLLAMA_NUM_PARALLEL says
// (docs/rules/ollama.md). The publisher learns it from the emulators' /api/show over HTTP; the
// sidecar's scheduler then spreads embedding calls over the warm copies, and once each runs one
// it hands more to an engine's queue (up to its slots) instead of holding them itself.
import { afterEach, describe, expect, it } from "vitest";
import { closeHarnesses, h, harness } from "../helpers/proxy-calls.js";

afterEach(closeHarnesses);

const EMBED = "nomic-embed-text:latest";
const MODELS = { "qwen3:8b": 4900, "nomic-embed-text": 262 };

describe("embedding models run one call at a time", () => {
  it("a second call goes to the other warm copy, a third to an engine's queue", async () => {
    await harness({
      providers: [
        { name: "gpu-a", vramMiB: 24_563, models: MODELS, maxParallel: 4 },
        { name: "gpu-b", vramMiB: 24_563, models: MODELS, maxParallel: 4 },
      ],
    });
    // Both copies warm, loaded straight on the emulators.
    for (const name of ["gpu-a", "gpu-b"]) {
      const res = await fetch(`${h.emulator(name).url}/api/embed`, {
        method: "POST",
        body: JSON.stringify({ model: "nomic-embed-text", input: "x" }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    await h.publisher.probeNow();
    for (const name of ["gpu-a", "gpu-b"]) {
      const state = await h.state.providers.get(name);
      expect(state?.singleSlotModels).toEqual([EMBED]);
      expect(state?.loadedModels).toContain(EMBED);
    }
    const place = (i: number) =>
      h.scheduler.place({
        agent: "crew/tooler",
        threadId: `t${i}`,
        phase: "mulling",
        candidates: [{ model: EMBED, score: 80 }],
        promptTokens: 10,
        promptChars: 40,
        maxOutputTokens: 10,
        cannotWait: false,
      });
    const placed = [];
    for (let i = 0; i < 3; i++) placed.push(await place(i));
    // Four slots each would have put the first two on gpu-a (ties go to the lower name).
    expect(placed.map((p) => (p.kind === "placed" ? p.placement.provider : p.refusal.reason))).toEqual([
      "gpu-a",
      "gpu-b",
      "gpu-a",
    ]);
    for (const p of placed) {
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
