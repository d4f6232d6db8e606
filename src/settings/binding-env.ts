// The binding env (docs/rules/binding.md "Bind"): what the operator writes into an agent's
// Deployment and the sidecar reads: the static binding of each phase and the ranked
// candidate lists. The agent runtime reads the static endpoint too.
import { type Candidate, parseCandidates } from "../core/index.js";
import { type CommandName, defineSetting, defineText, invalidSetting, type Setting } from "./setting.js";

const READ_BY: readonly CommandName[] = ["sidecar", "standalone"];

function modelSetting(name: string, help: string): Setting<string> {
  return defineText({ name, help, readBy: READ_BY, writtenBy: ["operator"] });
}

function endpointSetting(name: string, help: string): Setting<string> {
  return defineSetting({
    name,
    type: "url",
    default: "",
    help,
    readBy: READ_BY,
    writtenBy: ["operator"],
    parseValue: (raw, source) => {
      const endpoint = raw.trim();
      if (endpoint === "") return "";
      try {
        new URL(endpoint);
      } catch {
        throw invalidSetting(source, `not a URL: "${endpoint}"`);
      }
      return endpoint;
    },
  });
}

function candidatesSetting(name: string, phase: string): Setting<Candidate[]> {
  return defineSetting<Candidate[]>({
    name,
    type: "json",
    default: [],
    defaultText: "",
    help: `the agent's ranked candidates for ${phase} calls, JSON [{"model":"qwen3:32b","score":70},…]; used when a request names none`,
    readBy: READ_BY,
    writtenBy: ["operator"],
    parseValue: (raw, source) => {
      // The operator writes [] for a phase with no candidates: none, as when unset.
      if (raw.trim() === "" || /^\[\s*\]$/.test(raw.trim())) return [];
      const parsed = parseCandidates(raw);
      if (parsed.candidates.length === 0) {
        throw invalidSetting(
          source,
          `${parsed.reason ?? "no candidates"} (expected e.g. [{"model":"qwen3:14b","score":60}])`,
        );
      }
      return parsed.candidates;
    },
  });
}

export const BINDING_SETTINGS = {
  staticModel: modelSetting(
    "KUBEMOOT_MODEL_MODEL",
    "the bound model of mulling calls: with KUBEMOOT_MODEL_ENDPOINT, the static binding a cannot_wait call falls back to",
  ),
  staticEndpoint: endpointSetting(
    "KUBEMOOT_MODEL_ENDPOINT",
    "the bound model's endpoint (URL); set together with KUBEMOOT_MODEL_MODEL",
  ),
  triageModel: modelSetting(
    "KUBEMOOT_TRIAGE_MODEL_MODEL_ID",
    "the bound model of triage calls: with KUBEMOOT_TRIAGE_MODEL_ENDPOINT, triage's static binding",
  ),
  triageEndpoint: endpointSetting(
    "KUBEMOOT_TRIAGE_MODEL_ENDPOINT",
    "the triage model's endpoint (URL); set together with KUBEMOOT_TRIAGE_MODEL_MODEL_ID",
  ),
  candidatesMulling: candidatesSetting("KUBEMOOT_MODEL_CANDIDATES_MULLING", "mulling"),
  candidatesTriage: candidatesSetting("KUBEMOOT_MODEL_CANDIDATES_TRIAGE", "triage"),
} as const;
