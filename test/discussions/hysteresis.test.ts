// Per-discussion bindings follow residency only past the hysteresis margin (docs/rules/binding.md
// §3, §9), end to end: the operator as a process probing two emulated GPUs of equal size over a
// real nats-server (test/helpers/discussion-fleet.ts), threads opened as a runtime opens them.
// The numbers (mulling, the crew's coordinator: no load term; no topology spread): gpu-a weighs
// 50, gpu-b 58; the capacity term is 20 on an empty card and 1 with qwen3:32b resident. So at
// first gpu-a scores 70 and gpu-b, holding the 32b, 59: the thread binds to gpu-a. The 32b is
// evicted from gpu-b (elsewhere): gpu-b scores 78, better by 8, within the margin of 25, and the
// thread stays, although a thread bound afresh now takes gpu-b. Then the 32b is loaded on gpu-a:
// 51 against 78, past the margin, and the thread moves.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DiscussionFleet, startDiscussionFleet } from "../helpers/discussion-fleet.js";

let fleet: DiscussionFleet;

beforeAll(async () => {
  fleet = await startDiscussionFleet({
    weights: { "gpu-a": 50, "gpu-b": 58 },
    spread: false,
    residents: { "gpu-b": ["qwen3:32b"] },
  });
}, 60_000);

afterAll(async () => {
  await fleet?.close();
});

it("a resident evicted elsewhere moves a thread only past the hysteresis margin", async () => {
  await fleet.residents("gpu-b", ["qwen3:32b"]);
  await fleet.seenBy("gpu-a");
  fleet.open("h1");
  const first = await fleet.bound("h1", (b) => b.kind === "binding", "h1's first binding");
  expect(first).toMatchObject({ provider: "gpu-a", model: "qwen3:14b", revision: 1 });
  // No spread here: triage takes the same card (spread.test.ts has the policy's spread).
  expect(fleet.reader.get("h1", "triage")).toMatchObject({ kind: "binding", provider: "gpu-a" });

  // Evicted elsewhere: gpu-b is now better by 8 points. A fresh thread takes gpu-b; h1, bound
  // again in that same run, stays.
  await fleet.generate("gpu-b", { model: "qwen3:32b", keep_alive: 0 });
  await fleet.residents("gpu-b", []);
  await fleet.seenBy("gpu-b");
  expect(fleet.reader.get("h1", "mulling")).toMatchObject({ provider: "gpu-a", revision: 1 });

  // Past the margin: gpu-a now holds the 32b, and gpu-b is better by 27.
  await fleet.generate("gpu-a", { model: "qwen3:32b" });
  const moved = await fleet.bound("h1", (b) => b.provider === "gpu-b", "h1 moved past the margin");
  expect(moved).toMatchObject({
    revision: 2,
    reason: "rebound from qwen3:14b on gpu-a to qwen3:14b on gpu-b",
  });
});
