// Agent loops in the simulation: the traffic is what an agent's tool loop sends (each turn's
// prompt is the last one, its answer and a tool result), and the sidecar's call loop, told the
// conversations, keeps each on the card whose prompt cache holds it.
import { describe, expect, it } from "vitest";
import { agentLoops, generateAgentLoops } from "./agent-loops.js";
import { simulate } from "./engine.js";

describe("agent-loop traffic", () => {
  const sc = agentLoops();
  const loops = generateAgentLoops(sc, 7);

  it("is one loop per agent, the same for a seed", () => {
    expect(loops.map((d) => d.turns[0]!.agent.id).sort()).toEqual(sc.agents.map((a) => a.id).sort());
    expect(generateAgentLoops(sc, 7)).toEqual(loops);
    expect(generateAgentLoops(sc, 8)).not.toEqual(loops);
  });

  it("grows each turn by the last answer and a tool result, up to the loop's context", () => {
    const shape = sc.loops!;
    for (const d of loops) {
      const calls = d.turns[0]!.calls;
      expect(calls.length).toBeGreaterThanOrEqual(shape.turnsMin);
      expect(calls.length).toBeLessThanOrEqual(shape.turnsMax);
      for (let k = 1; k < calls.length; k++) {
        const prev = calls[k - 1]!.prompt!;
        const cur = calls[k]!.prompt!;
        expect(cur.parts.slice(0, prev.parts.length)).toEqual(prev.parts);
        expect(cur.parts[prev.parts.length]).toEqual(prev.answer);
        expect(cur.parts[prev.parts.length + 1]!.assistant).toBe(false);
        expect(calls[k]!.promptTokens).toBeGreaterThan(calls[k - 1]!.promptTokens);
      }
      expect(calls.at(-1)!.promptTokens).toBeLessThan(sc.contextLength);
    }
  });

  it("gives some agents of a crew one system prompt", () => {
    const systems = loops.map((d) => d.turns[0]!.calls[0]!.prompt!.parts[0]!.key);
    expect(systems.some((k) => k.endsWith("/system") && !k.includes("/agent-"))).toBe(true);
  });
});

describe("placement on agent loops", () => {
  it("with the conversations, ours reuses more of the prompt caches and prefills less than without", async () => {
    const run = (policy: "ours" | "ours-no-affinity") =>
      simulate({ scenario: agentLoops(), policy, seed: 1, measure: false });
    const [with_, without] = [await run("ours"), await run("ours-no-affinity")];
    const a = with_.metrics.prompt_cache!;
    const b = without.metrics.prompt_cache!;
    expect(with_.metrics.completed).toBe(with_.metrics.calls);
    expect(a.available_tokens).toBe(b.available_tokens);
    expect(a.captured_share).toBeGreaterThan(b.captured_share);
    expect(a.prefill_s).toBeLessThan(b.prefill_s);
    expect(a.ttft_p95_s).toBeLessThanOrEqual(b.ttft_p95_s);
  });

  it("an engine's reuse never exceeds what an unbounded cache could have reused", async () => {
    const res = await simulate({ scenario: agentLoops(), policy: "round-robin", seed: 2, record: true });
    const turns = (res.calls ?? []).flatMap((c) => (c.prompt ? [c.prompt] : []));
    expect(turns.length).toBe(res.metrics.completed);
    for (const t of turns) {
      expect(t.cachedTokens).toBeLessThanOrEqual(t.availableTokens);
      expect(t.ttftMs).toBeGreaterThan(0);
    }
  });
});
