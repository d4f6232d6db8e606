// Issue 31: an agent loop keeps its prompt cache. A sidecar process and two emulated Ollama
// cards with the model warm on both; the official ollama client runs a conversation through
// the proxy. Its first turn lands on card b (a's one slot is busy); with a free slot on both
// cards afterwards, every next turn goes back to b, which still holds the conversation's prefix
// (the engine reports it cached), where without the conversation it would go to a, first by
// name. A caller's conversation id works the same; a bad one is a 400 naming the header.
import { Ollama } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmulatorHandle } from "../../src/emulator/index.js";
import { memorySidecarArgs, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";
import { warmOneSlotCard } from "../helpers/warm-card.js";

const MODEL = "qwen3:8b";
let cards: Record<"a" | "b", EmulatorHandle>;
let sidecar: SidecarProcess;
let base = "";

beforeAll(async () => {
  // Answers run 4,000 tokens unless cut: the hog below holds its slot for seconds.
  cards = { a: await warmOneSlotCard(MODEL, 4000), b: await warmOneSlotCard(MODEL, 4000) };
  sidecar = await startSidecarProcess(
    memorySidecarArgs(
      "--provider",
      `a=${cards.a.url},vram=24563,context=16384,parallel=1`,
      "--provider",
      `b=${cards.b.url},vram=24563,context=16384,parallel=1`,
      "--probe-interval-ms",
      "200",
    ),
  );
  base = `http://${sidecar.proxyAddress}`;
  // Both probed with the model warm.
  await waitUntil(
    async () => {
      const ps = (await (await fetch(`${base}/api/ps`)).json()) as { models: { provider: string }[] };
      return ps.models.length === 2;
    },
    10_000,
    "the model warm on both cards",
  );
});

afterAll(async () => {
  expect(await sidecar?.stop()).toBe(0);
  await cards?.a.close();
  await cards?.b.close();
});

function client(headers: Record<string, string> = {}): { ollama: Ollama; provider: () => string } {
  let last = "";
  const ollama = new Ollama({
    host: base,
    headers,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      last = res.headers.get("x-kubemoot-provider") ?? "";
      return res;
    },
  });
  return { ollama, provider: () => last };
}

const system = { role: "system", content: "You are the crew's release planner. ".repeat(80) } as const;
let hogs = 0;

/** Runs `turns` turns of one conversation; the first while card a's slot is held by another call. */
async function loop(turns: number, headers: Record<string, string> = {}) {
  const { ollama, provider } = client(headers);
  const hog = new AbortController();
  // A long call through the sidecar takes one card's only slot (on fresh state a's: a comes first
  // by name), placed (its answer begun) before the conversation starts there: the first turn goes
  // to the other card.
  const busy = await fetch(`${base}/api/chat`, {
    method: "POST",
    signal: hog.signal,
    headers: { "x-kubemoot-candidates": JSON.stringify([{ model: MODEL, score: 100 }]) },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: "user", content: `a long, unrelated call ${++hogs}` }],
    }),
  });
  const hogCard = busy.headers.get("x-kubemoot-provider") ?? "";
  const drained = busy.text().catch(() => undefined);
  const messages: { role: string; content: string }[] = [
    system,
    { role: "user", content: "Plan the release." },
  ];
  const where: string[] = [];
  const cached: number[] = [];
  for (let t = 0; t < turns; t++) {
    const r = (await ollama.chat({ model: MODEL, messages, options: { num_predict: 8 } })) as unknown as {
      message: { content: string };
      prompt_eval_cached_count?: number;
    };
    where.push(provider());
    cached.push(r.prompt_eval_cached_count ?? 0);
    if (t === 0) {
      hog.abort();
      await drained;
    }
    messages.push(
      { role: "assistant", content: r.message.content },
      { role: "user", content: `Step ${t + 2}?` },
    );
  }
  return { where, cached, hogCard };
}

describe("a conversation's turns", () => {
  it("go back to the copy that holds their prefix, and find it cached there", async () => {
    const { where, cached, hogCard } = await loop(4);
    expect(hogCard).toBe("a");
    expect(where[0]).toBe("b");
    expect(where.slice(1)).toEqual(["b", "b", "b"]);
    expect(cached.slice(1).every((n) => n > 0)).toBe(true);
  });

  it("with a caller's conversation id too; a bad id is a 400 naming the header", async () => {
    // The cards have served calls by now: which is first without a cache is theirs to say.
    const { where, hogCard } = await loop(3, { "x-kubemoot-conversation": "crew/planner#42" });
    expect(where[0]).not.toBe(hogCard);
    expect(where).toEqual([where[0], where[0], where[0]]);
    for (const bad of ["", "x".repeat(129)]) {
      const res = await fetch(`${base}/api/chat`, {
        method: "POST",
        headers: { "x-kubemoot-conversation": bad },
        body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], stream: false }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/X-Kubemoot-Conversation/);
    }
  });
});
