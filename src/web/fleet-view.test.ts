// The fleet and tickets panels' data (docs/web-view.md "Fleet", "Tickets"): each card's VRAM bar
// as core accounts it (resident models, loads in flight, reserve, free), suspect marks against
// the last probe, and the live tickets with their holders' agents.
import { describe, expect, it } from "vitest";
import { iso, provider, residency, T0, ticket } from "../../test/helpers/core-fixtures.js";
import { budgetView, reserveMiB } from "../core/index.js";
import { agentHolderId } from "../state/index.js";
import { type FleetInputs, providerCards, ticketRows, usedVram } from "./fleet-view.js";

const TOTAL = 24563;
const Q8 = "qwen3:8b";
const Q14 = "qwen3:14b";
const G4 = "gemma3:4b";

function inputs(over: Partial<FleetInputs> = {}): FleetInputs {
  return {
    states: [
      provider("rtx-4090", {
        totalVramMiB: TOTAL,
        loadedModelFootprintsMiB: { [Q8]: 5979, [Q14]: 12224 },
        maxParallel: 2,
        activeCount: 1,
        queueDepth: 3,
        engine: "ollama",
      }),
    ],
    tickets: [
      ticket("rtx-4090", G4, { coldLoad: true, modelFootprintMiB: 3000 }),
      ticket("rtx-4090", G4, { coldLoad: true, modelFootprintMiB: 2800 }),
      // Claimed cold, but its model is resident now: resident, not loading.
      ticket("rtx-4090", Q14, { coldLoad: true, modelFootprintMiB: 12224 }),
      ticket("rtx-5090", "qwen3:32b", { coldLoad: true, modelFootprintMiB: 20000 }),
    ],
    residencies: [],
    suspects: new Map(),
    ...over,
  };
}

describe("providerCards", () => {
  it("draws resident models, loads in flight, reserve and free, summing to the total", () => {
    const [c, ...rest] = providerCards(inputs());
    expect(rest).toEqual([]);
    const used = 12224 + 5979 + 3000;
    const reserve = reserveMiB(TOTAL);
    expect(reserve).toBeGreaterThan(0);
    expect(c!.vram).toEqual([
      { kind: "resident", model: Q14, mib: 12224 },
      { kind: "resident", model: Q8, mib: 5979 },
      { kind: "loading", model: G4, mib: 3000 },
      { kind: "reserve", mib: reserve },
      { kind: "free", mib: TOTAL - used - reserve },
    ]);
    expect(c!.vram.reduce((a, s) => a + s.mib, 0)).toBe(c!.totalMiB);
    expect(c).toMatchObject({
      name: "rtx-4090",
      engine: "ollama",
      ready: true,
      suspect: false,
      lastProbedAt: iso(T0),
      totalMiB: TOTAL,
      loadedModels: [Q14, Q8],
      slots: { max: 2, running: 1, queued: 3 },
    });
    expect(c).not.toHaveProperty("label");
    expect(c).not.toHaveProperty("kvCacheUsage");
  });

  it("counts a residency overlay as resident, and gives the reserve only what is left", () => {
    const [c] = providerCards(
      inputs({
        residencies: [residency("rtx-4090", G4, 3000), residency("rtx-5090", "qwen3:32b", 20000)],
        tickets: [ticket("rtx-4090", "qwen3:30b", { coldLoad: true, modelFootprintMiB: 2000 })],
      }),
    );
    const kinds = c!.vram.map((s) => [s.kind, s.model ?? ""]);
    expect(kinds).toEqual([
      ["resident", G4],
      ["resident", Q14],
      ["resident", Q8],
      ["loading", "qwen3:30b"],
      ["reserve", ""],
      ["free", ""],
    ]);
    const left = TOTAL - 3000 - 12224 - 5979 - 2000;
    expect(left).toBeLessThan(reserveMiB(TOTAL));
    expect(c!.vram.slice(-2).map((s) => s.mib)).toEqual([left, 0]);
    expect(c!.vram.reduce((a, s) => a + s.mib, 0)).toBe(TOTAL);
    // More in use than the card holds (a stale probe): neither reserve nor free is negative.
    const [full] = providerCards(
      inputs({ states: [provider("p", { totalVramMiB: 8000, loadedModelFootprintsMiB: { [Q14]: 12224 } })] }),
    );
    expect(full!.vram.slice(-2)).toEqual([
      { kind: "reserve", mib: 0 },
      { kind: "free", mib: 0 },
    ]);
  });

  // PRODUCT BUG (fleet-view.ts, `if (t.coldLoad === false) continue;`): core counts a live ticket
  // on a model that is not resident as a load in flight whatever its coldLoad says (vram.ts
  // isInFlightLoad, snapshot.ts), so the bar must show it, or it shows room placements do not see.
  it("draws a ticket claimed warm whose model is no longer resident as loading, as core counts it", () => {
    const state = provider("rtx-4090", { totalVramMiB: TOTAL, loadedModelFootprintsMiB: { [Q8]: 5979 } });
    const tickets = [ticket("rtx-4090", Q14, { coldLoad: false, modelFootprintMiB: 12224 })];
    const [c] = providerCards(inputs({ states: [state], tickets }));
    const budget = budgetView(state, tickets, [], T0);
    expect(budget.inFlight).toBe(12224);
    expect(usedVram([c!])["rtx-4090"]).toBe(budget.resident + budget.inFlight);
    expect(c!.vram.filter((s) => s.kind === "loading")).toEqual([
      { kind: "loading", model: Q14, mib: 12224 },
    ]);
  });

  it("draws only resident and loading segments when the total is unknown", () => {
    const [c] = providerCards(
      inputs({ states: [provider("rtx-4090", { loadedModelFootprintsMiB: { [Q8]: 5979 } })] }),
    );
    expect(c!.totalMiB).toBe(0);
    expect(c!.vram).toEqual([
      { kind: "resident", model: Q8, mib: 5979 },
      { kind: "loading", model: G4, mib: 3000 },
      { kind: "loading", model: Q14, mib: 12224 },
    ]);
  });

  it("is suspect while a suspect mark is newer than the last healthy probe", () => {
    const suspectAt = (sinceMs: number | undefined, over = {}) =>
      providerCards(
        inputs({
          states: [provider("rtx-4090", { lastProbedAt: iso(T0), ...over })],
          suspects: new Map(sinceMs === undefined ? [] : [["rtx-4090", sinceMs]]),
        }),
      )[0]!.suspect;
    expect(suspectAt(undefined)).toBe(false);
    expect(suspectAt(T0 + 1000)).toBe(true);
    expect(suspectAt(T0 - 1000)).toBe(false);
    expect(suspectAt(T0 - 1000, { ready: false })).toBe(true);
    expect(suspectAt(T0 - 1000, { lastProbedAt: "" })).toBe(true);
    // A mark on another provider is not this one's.
    expect(providerCards(inputs({ suspects: new Map([["rtx-5090", T0 + 1000]]) }))[0]!.suspect).toBe(false);
  });

  it("names cards with labelOf, sorts them by name and keeps engine facts", () => {
    const cards = providerCards(
      inputs({
        states: [
          provider("rtx-5090", { engine: "vllm", kvCacheUsage: 0.42, ready: false }),
          provider("a100", {}),
          provider("rtx-4090", {}),
        ],
        labelOf: (p) =>
          p === "rtx-5090" ? "NVIDIA GeForce RTX 5090" : p === "a100" ? "A".repeat(80) : undefined,
      }),
    );
    expect(cards.map((c) => c.name)).toEqual(["a100", "rtx-4090", "rtx-5090"]);
    expect(cards[2]).toMatchObject({
      label: "NVIDIA GeForce RTX 5090",
      engine: "vllm",
      kvCacheUsage: 0.42,
      ready: false,
    });
    expect(cards[0]!.label).toBe("A".repeat(64));
    expect(cards[1]).not.toHaveProperty("label");
    expect(cards[1]!.engine).toBe("ollama");
  });
});

describe("ticketRows", () => {
  it("drops expired tickets, names holders' agents and sorts by provider then age", () => {
    const now = T0 + 60_000;
    const rows = ticketRows(
      [
        ticket("rtx-5090", Q14, { ticketId: "late", claimedAtMs: T0 + 5000, holderId: "host-1/77" }),
        ticket("rtx-4090", Q8, { ticketId: "expired", claimedAtMs: T0 - 200_000 }),
        ticket("rtx-4090", Q8, { ticketId: "just-expired", expiresAt: now }),
        ticket("rtx-5090", Q8, {
          ticketId: "early",
          claimedAtMs: T0,
          holderId: agentHolderId("team-a/planner", 4242),
          coldLoad: true,
          evicts: { "llama3:8b": 5000, [G4]: 3000 },
        }),
        ticket("rtx-4090", G4, { ticketId: "kubemoot", expiresAt: undefined, holderId: "kubemoot-gateway" }),
      ],
      now,
    );
    expect(rows.map((r) => r.id)).toEqual(["kubemoot", "early", "late"]);
    expect(rows[0]).toEqual({
      id: "kubemoot",
      provider: "rtx-4090",
      model: G4,
      holder: "kubemoot-gateway",
      claimedAt: T0,
      expiresAt: 0,
      coldLoad: false,
      victims: [],
    });
    expect(rows[1]).toEqual({
      id: "early",
      provider: "rtx-5090",
      model: Q8,
      holder: "team-a/planner",
      claimedAt: T0,
      expiresAt: T0 + 150_000,
      coldLoad: true,
      victims: [G4, "llama3:8b"],
    });
    expect(rows[2]!.holder).toBe("host-1/77");
  });

  it("sorts within a provider by when the ticket was claimed", () => {
    const rows = ticketRows(
      [
        ticket("p", Q8, { ticketId: "b", claimedAtMs: T0 + 2 }),
        ticket("p", Q8, { ticketId: "c", claimedAtMs: T0 + 3 }),
        ticket("p", Q8, { ticketId: "a", claimedAtMs: T0 + 1 }),
      ],
      T0,
    );
    expect(rows.map((r) => r.id)).toEqual(["a", "b", "c"]);
  });
});

describe("usedVram", () => {
  it("sums resident models and loads in flight per card", () => {
    const cards = providerCards(inputs());
    expect(usedVram(cards)).toEqual({ "rtx-4090": 12224 + 5979 + 3000 });
    expect(usedVram([])).toEqual({});
  });
});
