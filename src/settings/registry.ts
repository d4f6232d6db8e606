// Every KUBEMOOT_* variable, declared once (docs/design.md §2). Readers reach a setting by its
// key (SETTINGS.lease), never by writing its name; docs/settings.md is generated from here.
import { BINDING_SETTINGS } from "./binding-env.js";
import { FAIR_SHARE_SETTINGS } from "./fair-share.js";
import { OPERATOR_SETTINGS } from "./operator.js";
import { SCHEDULING_SETTINGS } from "./scheduling.js";
import { SERVING_SETTINGS } from "./serving.js";
import type { CommandName, Setting } from "./setting.js";
import { STATE_SETTINGS } from "./state.js";
import { WEB_SETTINGS } from "./web.js";

/** The registry's sections, in the order docs/settings.md lists them. */
export const SETTING_SECTIONS = [
  { title: "Agent and scheduling", settings: SCHEDULING_SETTINGS },
  { title: "Fair share", settings: FAIR_SHARE_SETTINGS },
  { title: "Binding env", settings: BINDING_SETTINGS },
  { title: "Ports, limits and logs", settings: SERVING_SETTINGS },
  { title: "Shared state", settings: STATE_SETTINGS },
  { title: "Operator and binder", settings: OPERATOR_SETTINGS },
  { title: "Web view and decision records", settings: WEB_SETTINGS },
] as const;

export const SETTINGS = {
  ...SCHEDULING_SETTINGS,
  ...FAIR_SHARE_SETTINGS,
  ...BINDING_SETTINGS,
  ...SERVING_SETTINGS,
  ...STATE_SETTINGS,
  ...OPERATOR_SETTINGS,
  ...WEB_SETTINGS,
} as const;

export const ALL_SETTINGS: readonly Setting[] = Object.values(SETTINGS);

/** What src/scheduler/config.ts reads: the agent, its binding env and the scheduling settings. */
export const SCHEDULER_SETTINGS: readonly Setting[] = [
  ...Object.values(SCHEDULING_SETTINGS),
  ...Object.values(FAIR_SHARE_SETTINGS),
  ...Object.values(BINDING_SETTINGS),
  SETTINGS.decisionRecordsPerS,
];

/** The NATS connection beyond its URL (credentials, TLS files, bucket replicas). */
export const NATS_SETTINGS: readonly Setting[] = [
  SETTINGS.natsCreds,
  SETTINGS.natsTlsCa,
  SETTINGS.natsTlsCert,
  SETTINGS.natsTlsKey,
  SETTINGS.kvReplicas,
  SETTINGS.keyLayout,
];

export const LEADER_ELECTION_SETTINGS: readonly Setting[] = [
  SETTINGS.leaderElect,
  SETTINGS.leaderElectionLease,
  SETTINGS.leaderElectionNamespace,
  SETTINGS.leaderElectionLeaseDuration,
];

/** The settings `command` reads, in registry order. */
export function settingsReadBy(command: CommandName): Setting[] {
  return ALL_SETTINGS.filter((s) => s.readBy.includes(command));
}

/** The binding env, in the order the operator appends new variables to a container. */
export const BINDING_ENV: readonly Setting[] = ALL_SETTINGS.filter((s) => s.writtenBy.includes("operator"));
