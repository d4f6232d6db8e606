// Values and keys of kubemoot_discussion_bindings (docs/rules/state.md §2.5): a round trip, every
// malformed or foreign value skipped with its reason (never a throw), and the id checks.
import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { bucketSettings, DISCUSSION_BINDINGS_BUCKET } from "./buckets.js";
import {
  DISCUSSION_BINDING_MAX_BYTES,
  type DiscussionBinding,
  decodeDiscussionBinding,
  discussionBindingKey,
  encodeDiscussionBinding,
  MAX_DISCUSSION_CANDIDATES,
  parseDiscussionBindingKey,
  validatePhase,
  validateThreadId,
} from "./discussion-codec.js";
import { encodeJson } from "./kv.js";

const bound: DiscussionBinding = {
  v: 1,
  kind: "binding",
  thread: "thr_42-a",
  phase: "mulling",
  agent: "crew/alice",
  model: "qwen3:14b",
  modelRef: "qwen3-14b",
  provider: "gpu-b",
  endpoint: "http://ollama.gpu-b:11434",
  engine: "ollama",
  score: 87.5,
  candidates: [
    { model: "qwen3:14b", score: 87.5 },
    { model: "llama3:8b", score: 47 },
  ],
  reason: "rebound: provider gpu-b is better by 40 points",
  revision: 3,
  boundAt: "2026-03-01T12:00:00.000Z",
};

const unschedulable: DiscussionBinding = {
  v: 1,
  kind: "unschedulable",
  thread: "thr_42-a",
  phase: "triage",
  agent: "crew/alice",
  candidates: [],
  reason: "no model matches: every candidate needs more than 24 GiB",
  conditions: [{ type: "Scheduled", status: "False", reason: "Unschedulable", message: "0/3 models fit" }],
  revision: 1,
  boundAt: "2026-03-01T12:00:00Z",
};

const keyOf = (b: { thread?: unknown; phase?: unknown }) => `${b.thread}.${b.phase}`;
/** Decodes `value` (an object, written as JSON) under the key its own thread and phase name. */
const decodeRaw = (value: Record<string, unknown>, key = keyOf(value)) =>
  decodeDiscussionBinding(encodeJson(value), key);

function invalid(f: () => unknown): KubemootError {
  try {
    f();
  } catch (err) {
    expect(KubemootError.is(err, ErrorCode.InvalidArgument), String(err)).toBe(true);
    return err as KubemootError;
  }
  throw new Error("expected an InvalidArgument error");
}

describe("discussion binding values", () => {
  it("round-trip: a binding and an unschedulable verdict decode to what was encoded", () => {
    for (const v of [bound, unschedulable]) {
      const d = decodeDiscussionBinding(encodeDiscussionBinding(v), keyOf(v));
      expect(d.reason).toBeUndefined();
      expect(d.binding).toEqual(v);
    }
  });

  it("write the documented JSON, known fields only, and decoding drops unknown ones", () => {
    const withExtra = { ...bound, extra: "x" } as DiscussionBinding;
    const json = JSON.parse(new TextDecoder().decode(encodeDiscussionBinding(withExtra)));
    expect(json).toEqual(bound);
    expect(decodeRaw({ ...bound, future: { a: 1 } }).binding).toEqual(bound);
  });

  it("the bucket takes 8 KiB values, 30-minute TTL, history 1", () => {
    expect(bucketSettings(3)[DISCUSSION_BINDINGS_BUCKET]).toEqual({
      history: 1,
      ttlMs: 30 * 60_000,
      maxValueBytes: DISCUSSION_BINDING_MAX_BYTES,
      replicas: 3,
    });
    expect(DISCUSSION_BINDING_MAX_BYTES).toBe(8192);
  });

  const candidates = (n: number) => Array.from({ length: n }, (_, i) => ({ model: `m${i}`, score: i }));
  const malformed: [string, Record<string, unknown>, RegExp, string?][] = [
    ["another version", { ...bound, v: 2 }, /^v: must be 1/],
    ["no version", { ...bound, v: undefined }, /^v: must be 1/],
    ["an unknown kind", { ...bound, kind: "maybe" }, /^kind:/],
    ["a thread with a dot", { ...bound, thread: "a.b" }, /^key "a\.b\.mulling" is not/, "a.b.mulling"],
    ["a thread that is not the key's", { ...bound, thread: "other" }, /not its key/, keyOf(bound)],
    ["a phase that is not the key's", { ...bound, phase: "triage" }, /not its key/, keyOf(bound)],
    ["an unknown phase", { ...bound, phase: "voting" }, /^phase:/, keyOf(bound)],
    ["an agent without a namespace", { ...bound, agent: "alice" }, /^agent: must be <namespace>\/<name>/],
    ["a numeric agent", { ...bound, agent: 7 }, /^agent: must be a string/],
    ["a binding without a model", { ...bound, model: undefined }, /^model: must be a string/],
    ["an empty model", { ...bound, model: "" }, /^model: must not be empty/],
    ["an oversize model", { ...bound, model: "m".repeat(257) }, /^model: must be at most 256/],
    ["a numeric provider", { ...bound, provider: 1 }, /^provider: must be a string/],
    [
      "an oversize endpoint",
      { ...bound, endpoint: `http://${"e".repeat(1100)}` },
      /^endpoint: must be at most/,
    ],
    ["a string score", { ...bound, score: "87" }, /^score: must be a finite number/],
    ["candidates not a list", { ...bound, candidates: {} }, /^candidates: must be an array/],
    ["no candidates field", { ...bound, candidates: undefined }, /^candidates: must be an array/],
    [
      "more than 64 candidates",
      { ...bound, candidates: candidates(MAX_DISCUSSION_CANDIDATES + 1) },
      /^candidates: must list at most 64 entries, has 65/,
    ],
    ["a candidate without a score", { ...bound, candidates: [{ model: "m" }] }, /^candidates\[0\]\.score/],
    ["a candidate without a model", { ...bound, candidates: [{ score: 1 }] }, /^candidates\[0\]\.model/],
    ["no reason", { ...bound, reason: undefined }, /^reason: must be a string/],
    ["an oversize reason", { ...bound, reason: "r".repeat(1025) }, /^reason: must be at most 1024/],
    ["conditions not a list", { ...unschedulable, conditions: "x" }, /^conditions: must be an array/],
    [
      "a condition status that is not True/False",
      { ...unschedulable, conditions: [{ type: "Scheduled", status: "Unknown", reason: "", message: "" }] },
      /^conditions\[0\]\.status/,
    ],
    [
      "a condition without its message",
      { ...unschedulable, conditions: [{ type: "Scheduled", status: "False", reason: "R" }] },
      /^conditions\[0\]\.message: must be a string/,
    ],
    ["revision 0", { ...bound, revision: 0 }, /^revision: must be an integer of at least 1/],
    ["a fractional revision", { ...bound, revision: 1.5 }, /^revision:/],
    ["a boundAt that is no time", { ...bound, boundAt: "yesterday" }, /^boundAt: must be an ISO 8601 time/],
    ["a numeric boundAt", { ...bound, boundAt: 1_700_000_000_000 }, /^boundAt: must be a string/],
  ];

  it.each(malformed)("skip %s, saying why", (_, value, reason, key) => {
    const d = decodeRaw(value, key);
    expect(d.binding).toBeUndefined();
    expect(d.reason).toMatch(reason);
  });

  it("skip what is not a JSON object, a foreign key, and an oversize value", () => {
    const bytes = (s: string) => new TextEncoder().encode(s);
    expect(decodeDiscussionBinding(bytes("{not json"), keyOf(bound)).reason).toBe("value is not JSON");
    expect(decodeDiscussionBinding(bytes("[1,2]"), keyOf(bound)).reason).toMatch(
      /^value: must be a JSON object/,
    );
    expect(decodeDiscussionBinding(bytes("null"), keyOf(bound)).reason).toMatch(/^value:/);
    expect(decodeDiscussionBinding(encodeDiscussionBinding(bound), "wait.m.ns.a").reason).toMatch(
      /is not <threadId>/,
    );
    expect(decodeDiscussionBinding(encodeDiscussionBinding(bound), "thr_42-a").reason).toMatch(/is not/);
    const huge = new Uint8Array(DISCUSSION_BINDING_MAX_BYTES + 1).fill(32);
    expect(decodeDiscussionBinding(huge, keyOf(bound)).reason).toMatch(/exceeds 8192/);
  });

  it("refuse to encode what readers would skip, naming the field", () => {
    expect(invalid(() => encodeDiscussionBinding({ ...bound, thread: "a b" })).field).toBe("thread");
    expect(invalid(() => encodeDiscussionBinding({ ...bound, score: Number.NaN })).field).toBe("score");
    const tooBig = { ...bound, candidates: candidates(64).map((c) => ({ ...c, model: "m".repeat(200) })) };
    const err = invalid(() => encodeDiscussionBinding(tooBig));
    expect(err.field).toBe("value");
    expect(err.message).toMatch(/over the bucket's maximum of 8192/);
  });
});

describe("discussion binding keys", () => {
  it("are <threadId>.<phase>, read back by parseDiscussionBindingKey", () => {
    expect(discussionBindingKey("thr_42-a", "triage")).toBe("thr_42-a.triage");
    expect(parseDiscussionBindingKey("thr_42-a.triage")).toEqual({ thread: "thr_42-a", phase: "triage" });
    for (const foreign of [
      "thr",
      "thr.voting",
      "a.b.mulling",
      ".mulling",
      "*.mulling",
      "x".repeat(129) + ".triage",
    ]) {
      expect(parseDiscussionBindingKey(foreign), foreign).toBeUndefined();
    }
  });

  it("take thread ids of 1–128 characters of [A-Za-z0-9_-], naming the field and the rule", () => {
    for (const ok of ["a", "Z9_-", "x".repeat(128)])
      expect(() => validateThreadId(ok, "thread")).not.toThrow();
    for (const bad of ["", "a.b", "a*", ">", "a b", "tab\t", "é", "x".repeat(129)]) {
      const err = invalid(() => validateThreadId(bad, "spec.thread"));
      expect(err.field).toBe("spec.thread");
      expect(err.message).toMatch(/^spec\.thread: must be 1–128 characters of \[A-Za-z0-9_-\]/);
      expect(err.message).toMatch(/no dots, wildcards or whitespace/);
    }
    expect(invalid(() => validateThreadId(42, "thread")).message).toBe(
      "thread: must be a string, got number",
    );
    const long = invalid(() => validateThreadId("y".repeat(1000), "thread")).message;
    expect(long.length).toBeLessThan(400); // quotes a prefix of the input, never all of it
  });

  it("take the phases mulling and triage only", () => {
    validatePhase("mulling", "phase");
    validatePhase("triage", "phase");
    const err = invalid(() => validatePhase("voting", "binding.phase"));
    expect(err.field).toBe("binding.phase");
    expect(err.message).toBe('binding.phase: must be one of "mulling", "triage", got "voting"');
    expect(invalid(() => discussionBindingKey("t", "Triage" as never)).field).toBe("phase");
  });
});
