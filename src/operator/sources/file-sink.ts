// The file sink: bindings written where a standalone sidecar (no Kubernetes) reads them.
//
//   <dir>/bindings/<namespace>/<agent>.json   one agent: env, status.scheduling, conditions,
//                                              candidates, unschedulable phases
//   <dir>/bindings.json                        every agent, policy status and the events
//
// Each agent document is a superset of that agent's entry in the `bind` dry run output
// (mulling, triage, candidates, unschedulable), and bindings.json a superset of the dry run's
// document ({agents, events}), so one reader handles both.
//
// Files are written atomically (a temporary file in the same directory, then rename) and only
// when their content changes; files of agents that no longer exist are removed. The previous
// run's bindings.json gives the agents' statuses back on restart (hysteresis survives it).
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rmdir, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentResult,
  type AgentSchedulingStatus,
  type BindResult,
  type Candidate,
  type Condition,
  type DryRunPhase,
  type SchedulingEvent,
  toDryRun,
  type Unschedulable,
} from "../../binding/index.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import { type BindingSink, count, emptyReport, type RestoredStatus, type SinkReport } from "./types.js";

export const BINDING_FILE_VERSION = 1;
export const BINDINGS_DIR = "bindings";
export const BINDINGS_FILE = "bindings.json";

/** `<dir>/bindings/<ns>/<agent>.json`. */
export interface AgentBindingFile {
  version: typeof BINDING_FILE_VERSION;
  /** `<ns>/<name>`. */
  agent: string;
  namespace: string;
  name: string;
  /** The governing CrewSchedulingPolicy's name; absent when none applies. */
  crewSchedulingPolicy?: string;
  mulling?: DryRunPhase;
  triage?: DryRunPhase;
  candidates: { mulling: Candidate[]; triage: Candidate[] };
  unschedulable: Unschedulable[];
  /** The agent's env: KUBEMOOT_MODEL_*, KUBEMOOT_TRIAGE_*, KUBEMOOT_MODEL_CANDIDATES_*. */
  env: Record<string, string>;
  /** What Agent.status.scheduling would be on a cluster. */
  scheduling: AgentSchedulingStatus;
  conditions: Condition[];
}

export interface PolicyBindingStatus {
  conditions: Condition[];
  unknownPhases: string[];
  problems: string[];
  agents: number;
  unschedulableAgents: number;
}

/** `<dir>/bindings.json`. */
export interface BindingsFile {
  version: typeof BINDING_FILE_VERSION;
  agents: Record<string, AgentBindingFile>;
  policies: Record<string, PolicyBindingStatus>;
  events: SchedulingEvent[];
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Where the binding of agent `<namespace>/<name>` is written under the sink's directory. */
export function bindingFilePath(dir: string, namespace: string, name: string): string {
  if (!NAME.test(namespace) || !NAME.test(name)) {
    throw new KubemootError(ErrorCode.InvalidArgument, `not a Kubernetes object name: ${namespace}/${name}`);
  }
  return join(dir, BINDINGS_DIR, namespace, `${name}.json`);
}

/** Reads one agent's binding file; undefined when it does not exist (not bound yet). */
export async function readBindingFile(
  dir: string,
  namespace: string,
  name: string,
): Promise<AgentBindingFile | undefined> {
  try {
    return JSON.parse(await readFile(bindingFilePath(dir, namespace, name), "utf8")) as AgentBindingFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

export function agentBindingFile(a: AgentResult, dry: ReturnType<typeof toDryRun>): AgentBindingFile {
  const entry = dry.agents[a.key]!;
  return {
    version: BINDING_FILE_VERSION,
    agent: a.key,
    namespace: a.namespace,
    name: a.name,
    ...(a.policy ? { crewSchedulingPolicy: a.policy.name } : {}),
    ...(entry.mulling ? { mulling: entry.mulling } : {}),
    ...(entry.triage ? { triage: entry.triage } : {}),
    candidates: entry.candidates,
    unschedulable: entry.unschedulable,
    env: a.env,
    scheduling: a.status.scheduling,
    conditions: a.status.conditions,
  };
}

export function bindingsFile(result: BindResult): BindingsFile {
  const dry = toDryRun(result);
  const agents: Record<string, AgentBindingFile> = {};
  for (const a of result.agents) agents[a.key] = agentBindingFile(a, dry);
  const policies: Record<string, PolicyBindingStatus> = {};
  for (const p of result.policies) {
    policies[`${p.namespace}/${p.name}`] = {
      conditions: p.status.conditions,
      unknownPhases: p.unknownPhases,
      problems: p.problems,
      agents: p.agents,
      unschedulableAgents: p.unschedulableAgents,
    };
  }
  return { version: BINDING_FILE_VERSION, agents, policies, events: dry.events };
}

export interface FileSinkOptions {
  /** The output directory (created when missing). */
  dir: string;
  logger?: Logger;
}

export class FileBindingSink implements BindingSink {
  readonly kind = "files";
  readonly dir: string;
  private readonly log: Logger;

  constructor(options: FileSinkOptions) {
    this.dir = options.dir;
    this.log = options.logger ?? silentLogger;
  }

  async write(result: BindResult): Promise<SinkReport> {
    const report = emptyReport();
    const doc = bindingsFile(result);
    const wanted = new Set<string>();
    for (const a of result.agents) {
      const path = bindingFilePath(this.dir, a.namespace, a.name);
      wanted.add(path);
      await this.writeIfChanged(path, doc.agents[a.key]!, report, "agentFile");
    }
    await this.writeIfChanged(join(this.dir, BINDINGS_FILE), doc, report, "bindingsFile");
    await this.removeStale(wanted, report);
    return report;
  }

  async restore(): Promise<RestoredStatus> {
    const out: RestoredStatus = { agents: new Map(), policies: new Map() };
    let doc: Partial<BindingsFile>;
    try {
      doc = JSON.parse(await readFile(join(this.dir, BINDINGS_FILE), "utf8")) as Partial<BindingsFile>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
        this.log.warn({ err, dir: this.dir }, "bindings: previous bindings.json unreadable; starting fresh");
      }
      return out;
    }
    for (const [key, a] of Object.entries(doc.agents ?? {})) {
      if (a && typeof a === "object" && a.scheduling && Array.isArray(a.conditions)) {
        out.agents.set(key, { scheduling: a.scheduling, conditions: a.conditions });
      }
    }
    for (const [key, p] of Object.entries(doc.policies ?? {})) {
      if (p && typeof p === "object" && Array.isArray(p.conditions)) {
        out.policies.set(key, { conditions: p.conditions });
      }
    }
    return out;
  }

  private async writeIfChanged(path: string, value: unknown, report: SinkReport, what: string) {
    const text = `${JSON.stringify(value, null, 2)}\n`;
    try {
      const existing = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT") return undefined;
        throw err;
      });
      if (existing === text) {
        report.skipped += 1;
        return;
      }
      await atomicWrite(path, text);
      report.writes += 1;
      count(report, what);
    } catch (err) {
      report.failures.push({ target: `file ${path}`, message: (err as Error).message });
      this.log.error({ err, path }, "bindings: write failed");
    }
  }

  /** Removes binding files of agents that are gone (and namespace directories left empty). */
  private async removeStale(wanted: Set<string>, report: SinkReport): Promise<void> {
    const root = join(this.dir, BINDINGS_DIR);
    let namespaces: string[];
    try {
      namespaces = await readdir(root);
    } catch {
      return;
    }
    for (const ns of namespaces) {
      if (!NAME.test(ns)) continue;
      const nsDir = join(root, ns);
      let files: string[];
      try {
        files = await readdir(nsDir);
      } catch {
        continue;
      }
      let left = files.length;
      for (const f of files) {
        const path = join(nsDir, f);
        if (!f.endsWith(".json") || wanted.has(path)) continue;
        try {
          await unlink(path);
          left -= 1;
          report.writes += 1;
          count(report, "agentFileRemoved");
        } catch (err) {
          report.failures.push({ target: `file ${path}`, message: (err as Error).message });
        }
      }
      if (left === 0) await rmdir(nsDir).catch(() => undefined);
    }
  }
}

/** Writes `text` to a temporary file beside `path`, then renames it over `path`. */
export async function atomicWrite(path: string, text: string): Promise<void> {
  const dir = join(path, "..");
  await mkdir(dir, { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(tmp, text, "utf8");
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}
