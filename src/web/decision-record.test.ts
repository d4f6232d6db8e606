// Decision records on the wire (docs/web-view.md "Decision records"): the encoder keeps a record
// within MAX_RECORD_BYTES (dropping options and attribution first, then the record), the reader
// takes only what it expects (a malformed or oversized message is dropped, never shown), and a
// record's subject is its agent's namespace as one NATS token.
import { describe, expect, it } from "vitest";
import { T0 } from "../../test/helpers/core-fixtures.js";
import {
  DECISIONS_SUBJECT,
  decisionSubject,
  decodeRecord,
  encodeRecord,
  MAX_RECORD_BYTES,
  MAX_TEXT,
} from "./decision-record.js";
import type { DecisionRecord } from "./view-types.js";

const enc = new TextEncoder();
const bytesOf = (o: unknown) => enc.encode(JSON.stringify(o));

const placed: DecisionRecord = {
  v: 1,
  id: "t-0001",
  at: T0,
  kind: "placed",
  agent: "team-a/planner",
  crew: "team-a",
  instance: "team-a/planner@4242",
  model: "qwen3:14b",
  provider: "rtx-4090",
  engine: "ollama",
  cold: true,
  evicted: ["qwen3:8b"],
  waitMs: 1250,
  policy: "time",
  options: [
    { provider: "rtx-4090", model: "qwen3:14b", kind: "cold", seconds: 7.5 },
    { provider: "rtx-5090", model: "qwen3:14b", kind: "queue", seconds: 12 },
  ],
  priority: "standard",
  queuePosition: 2,
  bindingRevision: 4,
  attribution: { ticketId: "t-0001", promptTokens: "1200", coldLoad: true, evicted: ["qwen3:8b"] },
  weight: 3,
  traceId: "0af7651916cd43dd8448eb211c80319c",
};

/** The record as raw JSON fields, with `over` applied (undefined deletes a field). */
function raw(over: Record<string, unknown> = {}): Record<string, unknown> {
  const o: Record<string, unknown> = { ...placed, ...over };
  for (const [k, v] of Object.entries(over)) if (v === undefined) delete o[k];
  return o;
}

describe("encodeRecord", () => {
  it("keeps a normal record whole", () => {
    const bytes = encodeRecord(placed)!;
    expect(bytes).toBeDefined();
    expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual(placed);
  });

  it("drops options and attribution from an oversized record, and the result fits", () => {
    const big: DecisionRecord = {
      ...placed,
      options: Array.from({ length: 60 }, (_, i) => ({
        provider: `provider-${i}`,
        model: "qwen3:14b",
        kind: "warm" as const,
        seconds: i,
      })),
      attribution: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`field${i}`, "x".repeat(40)])),
    };
    expect(bytesOf(big).length).toBeGreaterThan(MAX_RECORD_BYTES);
    const bytes = encodeRecord(big)!;
    expect(bytes).toBeDefined();
    expect(bytes.length).toBeLessThanOrEqual(MAX_RECORD_BYTES);
    const { options: _o, attribution: _a, ...lean } = big;
    expect(decodeRecord(bytes)).toEqual(lean);
  });

  it("drops a record still too large without its options and attribution", () => {
    // The publisher cuts messages with cutText; the encoder itself does not.
    expect(
      encodeRecord({ ...placed, kind: "refused", message: "m".repeat(MAX_RECORD_BYTES) }),
    ).toBeUndefined();
  });
});

describe("decodeRecord", () => {
  it("reads an encoded record back exactly", () => {
    expect(decodeRecord(encodeRecord(placed)!)).toEqual(placed);
    const refused: DecisionRecord = {
      v: 1,
      id: "r-1",
      at: T0,
      kind: "refused",
      agent: "team-b/coder",
      crew: "team-b",
      instance: "team-b/coder@7",
      model: "qwen3:32b",
      waitMs: 0,
      reason: "model-too-large",
      message: "qwen3:32b needs 21 GiB; the largest card has 16 GiB",
      policy: "time",
      weight: 1,
    };
    expect(decodeRecord(encodeRecord(refused)!)).toEqual(refused);
  });

  it("rejects what is not JSON, or not a record of this version and kind", () => {
    expect(decodeRecord(enc.encode("{not json"))).toBeUndefined();
    expect(decodeRecord(enc.encode("null"))).toBeUndefined();
    expect(decodeRecord(enc.encode('"placed"'))).toBeUndefined();
    expect(decodeRecord(bytesOf(raw({ v: 2 })))).toBeUndefined();
    expect(decodeRecord(bytesOf(raw({ v: "1" })))).toBeUndefined();
    expect(decodeRecord(bytesOf(raw({ kind: "moved" })))).toBeUndefined();
    expect(decodeRecord(bytesOf(raw()))).toEqual(placed);
  });

  it.each(["id", "at", "agent", "crew", "instance", "model", "waitMs", "policy", "weight"])(
    "rejects a record without %s, or with it of the wrong type",
    (field) => {
      expect(decodeRecord(bytesOf(raw({ [field]: undefined })))).toBeUndefined();
      const numeric = field === "at" || field === "waitMs" || field === "weight";
      expect(decodeRecord(bytesOf(raw({ [field]: numeric ? "3" : 3 })))).toBeUndefined();
    },
  );

  it("rejects a weight under 1, a non-finite number and an over-long name", () => {
    expect(decodeRecord(bytesOf(raw({ weight: 0.5 })))).toBeUndefined();
    expect(decodeRecord(bytesOf(raw({ weight: 0 })))).toBeUndefined();
    expect(decodeRecord(bytesOf(raw({ weight: 1 })))?.weight).toBe(1);
    expect(
      decodeRecord(enc.encode(JSON.stringify(raw()).replace('"at":', '"at":1e999,"x":'))),
    ).toBeUndefined();
    expect(decodeRecord(bytesOf(raw({ agent: "a".repeat(254) })))).toBeUndefined();
    expect(decodeRecord(bytesOf(raw({ id: "i".repeat(129) })))).toBeUndefined();
  });

  it("rejects more bytes than MAX_RECORD_BYTES, even when they are a valid record", () => {
    const json = JSON.stringify(raw());
    const padded = enc.encode(json + " ".repeat(MAX_RECORD_BYTES - json.length + 1));
    expect(padded.length).toBe(MAX_RECORD_BYTES + 1);
    expect(decodeRecord(padded)).toBeUndefined();
    expect(decodeRecord(padded.slice(0, MAX_RECORD_BYTES))).toEqual(placed);
  });

  it("drops a list with a non-string item, keeping the rest of the record", () => {
    const r = decodeRecord(bytesOf(raw({ evicted: ["qwen3:8b", 3] })))!;
    expect(r).toBeDefined();
    expect(r).not.toHaveProperty("evicted");
    expect(r.model).toBe("qwen3:14b");
    const a = decodeRecord(bytesOf(raw({ attribution: { ticketId: "t", evicted: ["a", null] } })))!;
    expect(a).not.toHaveProperty("attribution");
    expect(decodeRecord(bytesOf(raw({ evicted: Array(17).fill("m") })))).not.toHaveProperty("evicted");
  });

  it("drops malformed options as a whole, and keeps at most three", () => {
    const opt = placed.options![0]!;
    expect(decodeRecord(bytesOf(raw({ options: [opt, { ...opt, kind: "teleport" }] })))).not.toHaveProperty(
      "options",
    );
    expect(decodeRecord(bytesOf(raw({ options: [{ ...opt, seconds: "7" }] })))).not.toHaveProperty("options");
    expect(decodeRecord(bytesOf(raw({ options: [opt, opt, opt, opt, opt] })))?.options).toEqual([
      opt,
      opt,
      opt,
    ]);
  });

  it("keeps a W3C trace id only", () => {
    for (const bad of ["0AF7651916CD43DD8448EB211C80319C", "0af7651916cd43dd8448eb211c80319", "zz", 7]) {
      const r = decodeRecord(bytesOf(raw({ traceId: bad })))!;
      expect(r).toBeDefined();
      expect(r).not.toHaveProperty("traceId");
    }
    expect(decodeRecord(bytesOf(raw()))?.traceId).toBe(placed.traceId);
  });

  it("cuts long free text", () => {
    const r = decodeRecord(
      bytesOf(raw({ kind: "refused", message: "w".repeat(1000), attribution: { error: "e".repeat(500) } })),
    )!;
    expect(r.message).toHaveLength(MAX_TEXT);
    expect(r.message!.endsWith("…")).toBe(true);
    expect(r.message!.startsWith("w".repeat(MAX_TEXT - 1))).toBe(true);
    expect(r.attribution!.error).toHaveLength(MAX_TEXT);
    const short = decodeRecord(bytesOf(raw({ message: "m".repeat(MAX_TEXT) })))!;
    expect(short.message).toBe("m".repeat(MAX_TEXT));
  });

  it("rejects attribution with nested objects or over-long keys, keeping the record", () => {
    for (const attribution of [
      { ticketId: "t", placedAt: { seconds: 1 } },
      { ticketId: "t", inner: null },
      ["t"],
      { ["k".repeat(65)]: 1 },
    ]) {
      const r = decodeRecord(bytesOf(raw({ attribution })))!;
      expect(r).toBeDefined();
      expect(r).not.toHaveProperty("attribution");
    }
    expect(decodeRecord(bytesOf(raw()))?.attribution).toEqual(placed.attribution);
  });

  it("takes no field it does not know", () => {
    const r = decodeRecord(bytesOf(raw({ prompt: "tell me a secret", endpoint: "http://10.0.0.1:11434" })))!;
    expect(r).toEqual(placed);
  });
});

describe("decisionSubject", () => {
  it("is the agent's namespace as one NATS token", () => {
    expect(DECISIONS_SUBJECT).toBe("kubemoot.decisions");
    expect(decisionSubject("ns/agent")).toBe("kubemoot.decisions.ns");
    expect(decisionSubject("team-a_1/planner")).toBe("kubemoot.decisions.team-a_1");
    expect(decisionSubject("")).toBe("kubemoot.decisions._");
    expect(decisionSubject("no-namespace")).toBe("kubemoot.decisions._");
    expect(decisionSubject("/name")).toBe("kubemoot.decisions._");
    expect(decisionSubject("a.b*c >d/name")).toBe("kubemoot.decisions.a_b_c__d");
    expect(decisionSubject(`${"n".repeat(300)}/x`)).toBe(`kubemoot.decisions.${"n".repeat(253)}`);
  });
});
