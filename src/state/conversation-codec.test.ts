// Conversation records (docs/rules/state.md §2.4): their keys in both layouts, their values read
// strictly, and the tickets book publishing, listing and withdrawing them.
import { afterEach, describe, expect, it } from "vitest";
import { providerState } from "../../test/helpers/state-fixtures.js";
import type { ConversationSeen } from "../core/index.js";
import { conversationJson, MAX_PUBLISHED_PREFIXES, parseConversation } from "./conversation-codec.js";
import { MemoryKvStore } from "./memory-kv.js";
import { openStateStore, type StateStore } from "./store.js";
import { keyLayout } from "./ticket-keys.js";

const record: ConversationSeen = {
  provider: "rig-1",
  model: "qwen3:14b",
  key: "Zm9vYmFyYmF6cXV4cXV1dXg",
  namespace: "crew",
  tokens: 12_345,
  atMs: Date.UTC(2026, 11, 6),
  prefixes: [{ hash: "c2FsdGVkLXByZWZpeC1oYXNo", tokens: 1500 }],
};

describe("conversation record keys", () => {
  it("name provider, namespace and key in the scoped layout, provider and key in Kubemoot's", () => {
    const scoped = keyLayout("scoped", "crew/a1#x");
    const k = scoped.conversation("rig-1", "crew/a1", record.key);
    expect(k).toBe(`c.rig-1.crew.${record.key}`);
    expect(scoped.parse(k)).toEqual({ kind: "conversation", provider: "rig-1", key: record.key });
    expect(scoped.providerOf(k)).toBe("rig-1");
    const kubemoot = keyLayout("kubemoot");
    const k2 = kubemoot.conversation("rig-1", "crew/a1", record.key);
    expect(k2).toBe(`_conv__rig-1__${record.key}`);
    expect(kubemoot.parse(k2)).toEqual({ kind: "conversation", provider: "rig-1", key: record.key });
  });

  it("refuse a key that is not a hash: it would change what a watch or a permission matches", () => {
    for (const bad of ["a.b", "*", ">", "short", "x".repeat(65)]) {
      expect(() => keyLayout("scoped").conversation("rig-1", "crew/a1", bad)).toThrow(/conversation/);
      expect(keyLayout("scoped").parse(`c.rig-1.crew.${bad}`).kind).toBe("foreign");
    }
  });
});

describe("conversation record values", () => {
  it("round-trip, with no text but hashes and sizes", () => {
    const json = conversationJson(record);
    expect(Object.keys(json).sort()).toEqual(["at", "model", "ns", "prefixes", "tokens", "v"]);
    expect(parseConversation(JSON.parse(JSON.stringify(json)), record.provider, record.key)).toEqual(record);
  });

  it("are skipped when a field is missing or out of bounds", () => {
    const good = conversationJson(record);
    const bad: unknown[] = [
      null,
      "x",
      { ...good, model: "" },
      { ...good, model: "m".repeat(300) },
      { ...good, tokens: -1 },
      { ...good, at: 0 },
      { ...good, prefixes: "x" },
      { ...good, prefixes: [{ h: "", t: 5 }] },
      { ...good, prefixes: [{ h: "abc", t: 0 }] },
      { ...good, prefixes: Array.from({ length: MAX_PUBLISHED_PREFIXES + 1 }, () => ({ h: "abc", t: 5 })) },
    ];
    for (const raw of bad)
      expect(parseConversation(raw, "rig-1", record.key), JSON.stringify(raw)).toBeUndefined();
  });
});

describe("the tickets book and conversation records", () => {
  let store: StateStore | undefined;
  afterEach(async () => {
    await store?.close();
  });

  it("publishes, lists and withdraws them, and they wake no waiting call", async () => {
    store = await openStateStore(new MemoryKvStore());
    await store.providerWriter.publish(providerState("rig-1", { totalVramMiB: 24563 }));
    const counter = store.capacity.counter;
    await store.tickets.writeConversation(record, "crew/a1");
    expect(
      [...(await store.tickets.everything()).conversations.copies.values()].map((c) => c.byTime),
    ).toEqual([[record]]);
    await store.tickets.deleteConversation("rig-1", "crew/a1", record.key);
    expect((await store.tickets.everything()).conversations.copies.size).toBe(0);
    expect(store.capacity.counter).toBe(counter);
  });
});
