// The sidecar's fair-share settings (docs/rules/fairness.md §2–§4): its calls' priority band,
// what the crew may ask for, the crew's weight, and the protocol's switch and half-life.
import { BANDS, type Band, DEFAULT_BAND, DEFAULT_FAIR_SHARE, parseBand } from "../core/index.js";
import { type CommandName, defineSetting, invalidSetting, parseBoolean, parseNumber } from "./setting.js";

const READ_BY: readonly CommandName[] = ["sidecar", "standalone"];

function bandSetting(name: string, dflt: Band, help: string) {
  return defineSetting<Band>({
    name,
    type: "choice",
    default: dflt,
    help,
    readBy: READ_BY,
    // From the crew's CrewSchedulingPolicy spec.fairShare, when it sets one.
    writtenBy: ["operator"],
    parseValue: (raw, source) => {
      const b = parseBand(raw);
      if (b === undefined) throw invalidSetting(source, `expected ${BANDS.join(", ")}, got "${raw.trim()}"`);
      return b;
    },
  });
}

export const FAIR_SHARE_SETTINGS = {
  priority: bandSetting(
    "KUBEMOOT_PRIORITY",
    DEFAULT_BAND,
    "the priority band of this sidecar's calls when a call names none: interactive, standard or batch",
  ),
  crewMaxPriority: bandSetting(
    "KUBEMOOT_CREW_MAX_PRIORITY",
    "interactive",
    "the highest band the crew's calls may ask for; a call asking for more gets this one",
  ),
  crewWeight: defineSetting<number>({
    name: "KUBEMOOT_CREW_WEIGHT",
    type: "number",
    default: 1,
    help: "the crew's share weight: backlogged crews get GPU service in proportion to their weights",
    readBy: READ_BY,
    writtenBy: ["operator"],
    parseValue: (raw, source) => {
      const n = parseNumber(raw, source, 0);
      if (!(n > 0)) throw invalidSetting(source, `expected a number > 0, got "${raw.trim()}"`);
      return n;
    },
  }),
  fairShare: defineSetting<boolean>({
    name: "KUBEMOOT_FAIR_SHARE",
    type: "boolean",
    default: true,
    help: "order contended admission across crews by band and weighted attained service (false: first claim wins)",
    readBy: READ_BY,
    parseValue: parseBoolean,
  }),
  fairHalfLife: defineSetting<number>({
    name: "KUBEMOOT_FAIR_SHARE_HALF_LIFE_SECONDS",
    type: "number",
    unit: "seconds",
    default: DEFAULT_FAIR_SHARE.halfLifeMs / 1000,
    help: "the half-life of a crew's attained service",
    readBy: READ_BY,
    parseValue: (raw, source) => parseNumber(raw, source, 1),
  }),
} as const;
