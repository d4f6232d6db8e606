// Issue 31: sidecars tell each other where their agents' conversations live (docs/rules/placement.md
// §5.5, docs/rules/state.md §2.4). Two sidecar processes of one crew on a real nats-server, two
// emulated Ollama cards of one slot each with the model warm on both. Agent a1's conversation
// runs on card a (its second turn publishes it); agent a2's new conversation, which without
// a1's record would take a's slot (the cards tie, and the name decides) and push a1's prompt out
// of its cache, goes to b; a1's next turn finds its prompt still cached on a. The record, read with a plain NATS KV client,
// names no conversation and carries no prompt text.
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Ollama } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmulatorHandle } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore, PROVIDER_TICKETS_BUCKET, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";
import { warmOneSlotCard } from "../helpers/warm-card.js";

const MODEL = "qwen3:8b";
const SYSTEM = "You keep the crew's release notes. Cite the ticket of every change. ".repeat(100);

let nats: NatsServer;
let cards: Record<"a" | "b", EmulatorHandle>;
let operator: StateStore;
let publisher: ProviderPublisher;
let a1: SidecarProcess;
let a2: SidecarProcess;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await NatsServer.start();
  cards = { a: await warmOneSlotCard(MODEL, 16), b: await warmOneSlotCard(MODEL, 16) };
  operator = await openStateStore(nats.url);
  publisher = new ProviderPublisher({ sink: operator.providerWriter, intervalMs: 200 });
  publisher.start();
  await publisher.setProviders(
    (["a", "b"] as const).map((name) => ({
      name,
      endpoint: cards[name].url,
      totalVramMiB: 24_563,
      maxParallel: 1,
      contextLength: 16_384,
    })),
  );
  await publisher.probeNow();
  const sidecar = (agent: string) =>
    startSidecarProcess(["--nats", nats.url, "--agent", agent, "--proxy-listen", "127.0.0.1:0"], {
      KUBEMOOT_MODEL_CANDIDATES_MULLING: `[{"model":"${MODEL}","score":50}]`,
    });
  [a1, a2] = await Promise.all([sidecar("crew/a1"), sidecar("crew/a2")]);
  nc = await connect({ servers: nats.url });
}, 60_000);

afterAll(async () => {
  const codes = await Promise.all([a1?.stop(), a2?.stop()]);
  await nc?.close();
  await publisher?.stop();
  await operator?.close();
  await cards?.a.close();
  await cards?.b.close();
  await nats?.dispose();
  expect(codes).toEqual([0, 0]);
});

/** The official ollama client through a sidecar's proxy, keeping the provider each answer came from. */
function client(s: SidecarProcess, conversation: string): { ollama: Ollama; provider: () => string } {
  let last = "";
  const ollama = new Ollama({
    host: `http://${s.proxyAddress}`,
    headers: { "x-kubemoot-conversation": conversation },
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      last = res.headers.get("x-kubemoot-provider") ?? "";
      return res;
    },
  });
  return { ollama, provider: () => last };
}

/** Conversation records in the bucket, read with the NATS KV client itself. */
async function records(): Promise<{ key: string; value: string }[]> {
  const kv = await new Kvm(nc).open(PROVIDER_TICKETS_BUCKET);
  const out: { key: string; value: string }[] = [];
  for await (const key of await kv.keys("c.>")) {
    const e = await kv.get(key);
    if (e && e.operation === "PUT") out.push({ key, value: e.string() });
  }
  return out;
}

describe("conversation records across sidecars", () => {
  it("keep another agent's new conversation off the slot that holds a live one", async () => {
    const first = client(a1, "release-notes-1");
    const q1 = { role: "user", content: "What changed in the scheduler this week?" };
    const turn = (k: number) => [
      { role: "system", content: SYSTEM },
      q1,
      ...Array.from({ length: k }, (_, i) => [
        { role: "assistant", content: `Change ${i}.` },
        { role: "user", content: `And then (${i})?` },
      ]).flat(),
    ];
    await first.ollama.chat({ model: MODEL, messages: turn(0) });
    expect(first.provider()).toBe("a");
    // Its second turn publishes it (a one-shot call would not).
    await first.ollama.chat({ model: MODEL, messages: turn(1) });
    expect(first.provider()).toBe("a");

    // The record is in the bucket; a2's sidecar reads its providers' keys when its call does.
    await waitUntil(
      async () => (await records()).some((r) => r.key.startsWith("c.a.crew.")),
      5_000,
      "a1's record",
    );

    const other = client(a2, "triage-1");
    const triage = [
      { role: "system", content: "You sort incoming bugs by severity. ".repeat(60) },
      { role: "user", content: "Sort these." },
    ];
    await other.ollama.chat({ model: MODEL, messages: triage });
    expect(other.provider()).toBe("b");
    await other.ollama.chat({
      model: MODEL,
      messages: [...triage, { role: "assistant", content: "Done." }, { role: "user", content: "Now these." }],
    });
    expect(other.provider()).toBe("b");

    const answer = await first.ollama.chat({ model: MODEL, messages: turn(2) });
    expect(first.provider()).toBe("a");
    expect(
      (answer as unknown as { prompt_eval_cached_count?: number }).prompt_eval_cached_count,
    ).toBeGreaterThan(1000);
  });

  it("name no conversation and carry no prompt text", async () => {
    const all = await records();
    expect(all.map((r) => r.key).sort()).toEqual([
      expect.stringMatching(/^c\.a\.crew\.[A-Za-z0-9_-]{22}$/),
      expect.stringMatching(/^c\.b\.crew\.[A-Za-z0-9_-]{22}$/),
    ]);
    for (const r of all) {
      expect(r.value).not.toMatch(/release-notes|triage|crew's release|sort|bugs/i);
      const v = JSON.parse(r.value) as Record<string, unknown>;
      expect(Object.keys(v).sort()).toEqual(["at", "model", "ns", "prefixes", "tokens", "v"]);
      expect(v).toMatchObject({ model: MODEL, ns: "crew" });
      expect(v.tokens as number).toBeGreaterThan(500);
    }
  });
});
