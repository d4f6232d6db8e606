// The settings registry (docs/design.md §2): every KUBEMOOT_* variable declared once, with
// its parser. Pure data and functions over an environment passed in; it imports only src/core
// and src/errors, so every folder may use it.
export {
  ALL_SETTINGS,
  BINDING_ENV,
  LEADER_ELECTION_SETTINGS,
  NATS_SETTINGS,
  SCHEDULER_SETTINGS,
  SETTING_SECTIONS,
  SETTINGS,
  settingsReadBy,
} from "./registry.js";
export {
  COMMANDS,
  type CommandName,
  isAgentRef,
  parseBoolean,
  parseNumber,
  readSetting,
  type Setting,
} from "./setting.js";
