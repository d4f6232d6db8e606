// A discussion's phases spread over providers (docs/rules/binding.md §4, §9), end to end: the
// operator as a process probing two emulated GPUs of equal size and weight over a real
// nats-server (test/helpers/discussion-fleet.ts), with the crew policy's topology spread
// (topologyKey provider, ScheduleAnyway). gpu-b holds qwen3:32b, so both phases score gpu-a
// higher (capacity 20 against 1, the weights cancelling): without the spread both would take it
// (hysteresis.test.ts shows that), with it triage goes to gpu-b. With one provider, ScheduleAnyway
// shares it (rebind.test.ts).
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DiscussionFleet, startDiscussionFleet } from "../helpers/discussion-fleet.js";

let fleet: DiscussionFleet;

beforeAll(async () => {
  fleet = await startDiscussionFleet({
    weights: { "gpu-a": 50, "gpu-b": 50 },
    spread: true,
    residents: { "gpu-b": ["qwen3:32b"] },
  });
}, 60_000);

afterAll(async () => {
  await fleet?.close();
});

it("binds one discussion's phases to different providers, where both score the same one best", async () => {
  await fleet.residents("gpu-b", ["qwen3:32b"]);
  await fleet.seenBy("gpu-a");
  fleet.open("s1");
  const mulling = await fleet.bound("s1", (b) => b.kind === "binding", "s1's mulling");
  const triage = await fleet.bound("s1", (b) => b.kind === "binding", "s1's triage", "triage");
  expect(mulling.provider).toBe("gpu-a");
  expect(triage.provider).toBe("gpu-b");
  // Another discussion of the same agent is spread on its own, whatever s1 took.
  fleet.open("s2");
  const other = await fleet.bound("s2", (b) => b.kind === "binding", "s2's triage", "triage");
  expect([other.provider, fleet.reader.get("s2", "mulling")?.provider]).toEqual(["gpu-b", "gpu-a"]);
});
