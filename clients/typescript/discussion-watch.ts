// Example: follow one discussion thread's bindings without a sidecar (docs/rules/state.md §2.5,
// docs/rules/binding.md §9). A runtime that makes its LLM calls itself announces the thread to
// the operator's discussion binder (`open`, sent again every 10 minutes: the binder drops a thread
// not opened again within 30), watches the keys `<thread>.*` of the bucket the binder publishes
// to, prints one line per change of a phase's binding, and announces `close` when it stops
// (SIGINT, SIGTERM or --seconds elapsed). Only the public NATS client packages are used, none of
// the scheduler's own code: copy it into your runtime and act on the values instead of printing.
//   node dist/clients/typescript/discussion-watch.js <nats-url> <thread-id> <namespace/agent> [--seconds N]
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";

const BUCKET = "kubemoot_discussion_bindings";
const REOPEN_MS = 10 * 60_000;
const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;
const AGENT = /^[^/\s]+\/[^/\s]+$/;

/** What this example reads of a version-1 value; the rest (endpoint, engine, score, …) is in state.md §2.5. */
interface Binding {
  kind: "binding" | "unschedulable";
  agent: string;
  model?: string;
  provider?: string;
  candidates: { model: string; score: number }[];
  reason: string;
  revision: number;
}

function usage(problem: string): never {
  process.stderr.write(
    `${problem}\nusage: discussion-watch <nats-url> <thread-id> <namespace/agent> [--seconds N]\n`,
  );
  process.exit(2);
}

const args = process.argv.slice(2);
let seconds = 0;
const flag = args.indexOf("--seconds");
if (flag >= 0) {
  seconds = Number(args[flag + 1]);
  if (!(seconds > 0)) usage("--seconds takes a positive number");
  args.splice(flag, 2);
}
const [url, thread, agent] = args;
if (url === undefined || thread === undefined || agent === undefined || args.length > 3)
  usage("expected three arguments");
if (!THREAD_ID.test(thread)) usage("the thread id must be 1–128 characters of [A-Za-z0-9_-]");
if (!AGENT.test(agent)) usage("the agent must be <namespace>/<name>");

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const optString = (v: unknown) => v === undefined || typeof v === "string";

/**
 * Why a value must be skipped, or undefined when it is a version-1 binding of this thread, phase
 * and agent. A reader skips, with a warning, whatever it does not understand (state.md §2.5).
 */
function problem(v: unknown, phase: string): string | undefined {
  if (phase !== "mulling" && phase !== "triage") return "the key is not <thread>.<mulling|triage>";
  if (!isObj(v) || Array.isArray(v)) return "not a JSON object";
  if (v.v !== 1) return `format version ${JSON.stringify(v.v)}, not 1`;
  if (v.kind !== "binding" && v.kind !== "unschedulable") return `unknown kind ${JSON.stringify(v.kind)}`;
  if (v.thread !== thread || v.phase !== phase) return "names another thread or phase than its key";
  if (v.agent !== agent) return `bound for agent ${JSON.stringify(v.agent)}, not ${agent}`;
  if (v.kind === "binding" && (typeof v.model !== "string" || v.model === "")) return "no model";
  if (!optString(v.model) || !optString(v.provider)) return "model or provider is not a string";
  const candidates = v.candidates;
  if (!Array.isArray(candidates)) return "candidates is not an array";
  if (!candidates.every((c) => isObj(c) && typeof c.model === "string" && Number.isFinite(c.score)))
    return "a candidate is not {model, score}";
  if (typeof v.reason !== "string") return "reason is not a string";
  if (!Number.isSafeInteger(v.revision) || (v.revision as number) < 1)
    return "revision is not an integer ≥ 1";
  return undefined;
}

function describe(phase: string, b: Binding): string {
  if (b.kind === "unschedulable") return `${phase} r${b.revision} unschedulable: ${b.reason}`;
  const on = b.provider === undefined ? "" : ` on ${b.provider}`;
  const candidates = b.candidates.map((c) => c.model).join(", ") || "none";
  return `${phase} r${b.revision} binding ${b.model}${on} (candidates: ${candidates}) — ${b.reason}`;
}

const nc = await connect({ servers: url, name: `discussion-watch ${thread}`, maxReconnectAttempts: -1 });
// The operator creates the bucket; open it without creating it (a missing bucket fails the watch).
const kv = await new Kvm(nc).open(BUCKET);
let watch: Awaited<ReturnType<typeof kv.watch>>;
try {
  // The last value of each matching key first, then every change.
  watch = await kv.watch({ key: `${thread}.*` });
} catch (err) {
  process.stderr.write(`cannot watch ${BUCKET} (is the operator's discussion binder running?): ${err}\n`);
  await nc.close();
  process.exit(1);
}

// Discussion events: plain core NATS, `kubemoot.discussion.<namespace>.<thread>.<open|close>`,
// the namespace the agent's.
const announce = (event: "open" | "close") =>
  nc.publish(
    `kubemoot.discussion.${agent.split("/")[0]}.${thread}.${event}`,
    JSON.stringify({ v: 1, agent }),
  );
announce("open");
const reopen = setInterval(() => announce("open"), REOPEN_MS);
let stopped = false;
const stop = () => {
  stopped = true;
  watch.stop();
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
const deadline = seconds > 0 ? setTimeout(stop, seconds * 1000) : undefined;
process.stdout.write(`thread ${thread} opened as ${agent}; watching ${BUCKET} ${thread}.*\n`);

// The binder rewrites an unchanged value every 10 minutes with the same revision: print changes only.
const shown = new Map<string, number>();
for await (const e of watch) {
  const phase = e.key.slice(thread.length + 1);
  if (e.operation !== "PUT") {
    // DEL: the thread closed (the binder deletes its bindings); PURGE: removed or expired.
    if (shown.delete(phase)) process.stdout.write(`${phase} binding removed\n`);
    continue;
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(e.value));
  } catch {
    value = undefined;
  }
  const why = value === undefined ? "not JSON" : problem(value, phase);
  if (why !== undefined) {
    process.stderr.write(`warning: skipped ${e.key} (KV revision ${e.revision}): ${why}\n`);
    shown.delete(phase); // the phase has no binding we can use until a valid value comes
    continue;
  }
  const b = value as Binding;
  if (shown.get(phase) === b.revision) continue;
  shown.set(phase, b.revision);
  process.stdout.write(`${describe(phase, b)}\n`);
}

clearInterval(reopen);
clearTimeout(deadline);
if (!stopped || nc.isClosed()) {
  process.stderr.write("the watch ended: connection lost\n");
  process.exit(1);
}
announce("close");
await nc.drain(); // sends the close event before the connection ends
process.stdout.write(`thread ${thread} closed\n`);
