// The sidecar's side of per-discussion bindings (docs/rules/binding.md §9): it tells the binder a
// thread is live (Commit) or ended (EndThread) on `kubemoot.discussion.<ns>.<thread>.{open,close}`, and
// reads the bindings the binder publishes, so a call of a bound thread uses its thread's ranked
// candidates instead of the pod's static ones, with no restart. It only reads the bucket. A
// binding of another agent, or of an id that is not a key token, leaves the call on its static
// candidates; one that says no model fits refuses a call that relies on it (unschedulable). The
// bucket is the operator's to create: until it exists (or while this NATS user may not read
// it), calls use their static candidates, and the sidecar tries again in the background.
import { quoteInput } from "../src/errors/index.js";
import type { Logger } from "../src/log/index.js";
import type { DiscussionLink, Phase, ThreadBinding } from "../src/scheduler/index.js";
import {
  DiscussionBindings,
  encodeDiscussionEvent,
  isDiscussionThreadId,
  type KvStore,
} from "../src/state/index.js";

export interface SidecarDiscussions {
  link: DiscussionLink;
  close(): Promise<void>;
}

const RETRY_FIRST_MS = 5_000;
const RETRY_MAX_MS = 60_000;
const WARN_EVERY_MS = 60_000;

export async function openDiscussions(kv: KvStore, log: Logger): Promise<SidecarDiscussions> {
  let bindings: DiscussionBindings | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (delayMs: number): Promise<void> => {
    try {
      const opened = await DiscussionBindings.open(kv, 1, { logger: log });
      if (closed) opened.close();
      else bindings = opened;
    } catch (err) {
      if (closed) return;
      if (delayMs === RETRY_FIRST_MS)
        log.warn(
          { err: String(err) },
          "discussion bindings not readable yet: threads use the static candidates",
        );
      timer = setTimeout(() => void attempt(Math.min(delayMs * 2, RETRY_MAX_MS)), delayMs);
      timer.unref();
    }
  };
  await attempt(RETRY_FIRST_MS);
  let warnedAtMs = Number.NEGATIVE_INFINITY;
  const tell = (kind: "open" | "close", agent: string, threadId: string) => {
    if (!agent) return;
    const m = encodeDiscussionEvent({ kind, agent, threadId });
    if (m) {
      kv.messages.publish(m.subject, m.data);
      return;
    }
    // Not a key token: the thread works as before (held plans, intents), on static candidates.
    // Said at most once a minute, so a runtime that names every thread this way is not a flood.
    if (kind === "open" && Date.now() - warnedAtMs >= WARN_EVERY_MS) {
      warnedAtMs = Date.now();
      log.warn(
        { thread: quoteInput(threadId, 64), field: "thread_id" },
        "thread id is not a NATS key token ([A-Za-z0-9_-], 1–128 characters): no per-discussion binding for it",
      );
    }
  };
  return {
    link: {
      binding(agent: string, threadId: string, phase: Phase): ThreadBinding | undefined {
        if (!bindings || !isDiscussionThreadId(threadId)) return undefined;
        const b = bindings.get(threadId, phase);
        if (b === undefined || b.agent !== agent) return undefined;
        return b.kind === "binding"
          ? { kind: "binding", revision: b.revision, candidates: b.candidates }
          : { kind: "unschedulable", revision: b.revision, reason: b.reason };
      },
      opened: (agent, threadId) => tell("open", agent, threadId),
      closed: (agent, threadId) => tell("close", agent, threadId),
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      bindings?.close();
    },
  };
}
