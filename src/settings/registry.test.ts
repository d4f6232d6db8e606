import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import {
  ALL_SETTINGS,
  BINDING_ENV,
  LEADER_ELECTION_SETTINGS,
  NATS_SETTINGS,
  SCHEDULER_SETTINGS,
  SETTING_SECTIONS,
  SETTINGS,
  settingsReadBy,
} from "./registry.js";
import { COMMANDS, readSetting } from "./setting.js";

describe("the registry", () => {
  it("declares each variable once, each named KUBEMOOT_*, each flag once", () => {
    const names = ALL_SETTINGS.map((s) => s.name);
    expect(names.length).toBeGreaterThan(40);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^KUBEMOOT_[A-Z0-9]+(_[A-Z0-9]+)*$/);
    const flags = ALL_SETTINGS.flatMap((s) => (s.flag ? [s.flag] : []));
    expect(new Set(flags).size).toBe(flags.length);
  });

  it("lists every setting in exactly one section", () => {
    const inSections = SETTING_SECTIONS.flatMap((sec) => Object.values(sec.settings));
    expect(inSections).toHaveLength(ALL_SETTINGS.length);
    expect(new Set(inSections)).toEqual(new Set(ALL_SETTINGS));
  });

  it("has every setting read by a command, and written ones read by the sidecar", () => {
    for (const s of ALL_SETTINGS) {
      expect(s.readBy.length, s.name).toBeGreaterThan(0);
      for (const c of s.readBy) expect(COMMANDS, s.name).toContain(c);
      if (s.writtenBy.length > 0) expect(s.readBy, s.name).toContain("sidecar");
    }
    expect(settingsReadBy("emulate")).toEqual([]);
    expect(settingsReadBy("bind")).toEqual([SETTINGS.schedulerStrategy]);
  });

  it("groups what one reader reads together, each read by its commands", () => {
    for (const s of SCHEDULER_SETTINGS) expect(s.readBy, s.name).toEqual(["sidecar", "standalone"]);
    for (const s of NATS_SETTINGS) expect(s.readBy, s.name).toEqual(["sidecar", "operator"]);
    for (const s of LEADER_ELECTION_SETTINGS) expect(s.readBy, s.name).toEqual(["operator"]);
    expect(BINDING_ENV.map((s) => s.name)).toEqual(
      ALL_SETTINGS.filter((s) => s.writtenBy.includes("operator")).map((s) => s.name),
    );
  });

  it("parses every default it states back to itself", () => {
    for (const s of ALL_SETTINGS) {
      if (s.default === undefined || s.default === "" || Array.isArray(s.default)) continue;
      expect(s.parse(String(s.default)), s.name).toEqual(s.default);
    }
  });
});

describe("reading a setting", () => {
  it("treats a blank variable as unset, and names the variable of a bad value", () => {
    expect(readSetting({}, SETTINGS.lease)).toBe(150);
    expect(readSetting({ KUBEMOOT_TICKET_LEASE_SECONDS: "  " }, SETTINGS.lease)).toBe(150);
    expect(readSetting({ KUBEMOOT_TICKET_LEASE_SECONDS: "2.5" }, SETTINGS.lease)).toBe(2.5);
    for (const bad of ["0", "-1", "soon"]) {
      expect(() => readSetting({ KUBEMOOT_TICKET_LEASE_SECONDS: bad }, SETTINGS.lease)).toThrow(
        `KUBEMOOT_TICKET_LEASE_SECONDS: expected a number ≥ 1, got "${bad}"`,
      );
    }
  });

  it("names the flag a value came from when told", () => {
    expect(() => SETTINGS.maxConnections.parse("0", "--max-connections")).toThrow(
      '--max-connections: expected a number ≥ 1, got "0"',
    );
    expect(SETTINGS.maxConnections.parse("3.7")).toBe(3);
    const err = (() => {
      try {
        SETTINGS.state.parse("disk");
      } catch (e) {
        return e;
      }
    })();
    expect(KubemootError.is(err, ErrorCode.InvalidConfig)).toBe(true);
    expect((err as KubemootError).field).toBe("KUBEMOOT_STATE");
    expect((err as Error).message).toBe('KUBEMOOT_STATE: expected memory or nats, got "disk"');
  });

  it("reads booleans, choices and the policy", () => {
    expect(SETTINGS.leaderElect.parse(" Yes ")).toBe(true);
    expect(SETTINGS.leaderElect.parse("0")).toBe(false);
    expect(() => SETTINGS.leaderElect.parse("maybe")).toThrow(
      'KUBEMOOT_LEADER_ELECT: expected true or false, got "maybe"',
    );
    expect(SETTINGS.kvReplicas.parse("3")).toBe(3);
    expect(() => SETTINGS.kvReplicas.parse("2")).toThrow('KUBEMOOT_KV_REPLICAS: expected 1, 3 or 5, got "2"');
    expect(SETTINGS.policy.parse("kubemoot")).toBe("kubemoot");
    expect(() => SETTINGS.policy.parse("fast")).toThrow(
      'KUBEMOOT_POLICY: expected one of "time", "kubemoot", got "fast"',
    );
    expect(() => SETTINGS.schedulerStrategy.parse("pack", "--strategy")).toThrow(
      '--strategy: expected spread or binpack, got "pack"',
    );
  });

  it("reads the binding env and the crew", () => {
    expect(SETTINGS.candidatesMulling.parse('[{"model":"a","score":5}]')).toEqual([{ model: "a", score: 5 }]);
    expect(SETTINGS.candidatesTriage.parse(" [ ] ")).toEqual([]);
    expect(() => SETTINGS.candidatesTriage.parse('[{"model":""}]')).toThrow(
      /^KUBEMOOT_MODEL_CANDIDATES_TRIAGE: /,
    );
    expect(() => SETTINGS.candidatesTriage.parse("{")).toThrow(
      /^KUBEMOOT_MODEL_CANDIDATES_TRIAGE: .*not JSON/,
    );
    expect(() => SETTINGS.staticEndpoint.parse("not a url")).toThrow(
      'KUBEMOOT_MODEL_ENDPOINT: not a URL: "not a url"',
    );
    expect(SETTINGS.crew.parse(" crew-a/pilot ")).toBe("crew-a/pilot");
    expect(() => SETTINGS.crew.parse("pilot")).toThrow('KUBEMOOT_CREW: expected NAMESPACE/NAME, got "pilot"');
  });

  it.each([
    ["contentio=2", 'unknown weight "contentio"'],
    ["contention=-1", 'contention: expected a number ≥ 0, got "-1"'],
    ["contention", 'contention: expected a number ≥ 0, got ""'],
    ["bestFit=lots", 'bestFit: expected a number ≥ 0, got "lots"'],
  ])("refuses the cost weights %s, naming the variable", (raw, message) => {
    expect(() => SETTINGS.costWeights.parse(raw)).toThrow(`KUBEMOOT_COST_WEIGHTS: ${message}`);
  });
});
