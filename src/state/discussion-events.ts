// The discussion events the binder learns live threads from (docs/rules/state.md §2.5): plain NATS
// messages on `kubemoot.discussion.<namespace>.<threadId>.<event>`, published by sidecars at
// Commit (`open`) and EndThread (`close`), and by runtimes that do not use a sidecar. The value is
// JSON `{"v":1,"agent":"<namespace>/<name>"}`, its namespace the subject's: a NATS user allowed
// its own namespaces' subjects only can speak for no other namespace's agents. Anything else is
// skipped by the reader, never trusted.

import { isDiscussionThreadId } from "./discussion-codec.js";
import { decodeJson, encodeJson } from "./kv.js";

export const DISCUSSION_SUBJECT_PREFIX = "kubemoot.discussion";
/** What the binder subscribes to. */
export const DISCUSSION_EVENTS_FILTER = `${DISCUSSION_SUBJECT_PREFIX}.*.*.*`;
/** `open`: the thread is live (again: a refresh); `close`: it ended, its bindings go. */
export const DISCUSSION_EVENTS = ["open", "close"] as const;
export type DiscussionEventKind = (typeof DISCUSSION_EVENTS)[number];

export interface DiscussionEvent {
  kind: DiscussionEventKind;
  threadId: string;
  /** The agent running the thread, `<namespace>/<name>`. */
  agent: string;
}

const MAX_AGENT = 256;
const AGENT = /^[^/\s]+\/[^/\s]+$/;

/** The agent's namespace when it can be one subject token (a Kubernetes namespace can). */
function namespaceToken(agent: string): string | undefined {
  const ns = agent.slice(0, agent.indexOf("/"));
  return agent.includes("/") && isDiscussionThreadId(ns) ? ns : undefined;
}

/**
 * The subject and payload of an event; undefined when the thread id cannot be a key token or the
 * agent is not `<namespace>/<name>` with a namespace that can be a subject token.
 */
export function encodeDiscussionEvent(e: DiscussionEvent): { subject: string; data: Uint8Array } | undefined {
  const ns = AGENT.test(e.agent) ? namespaceToken(e.agent) : undefined;
  if (!isDiscussionThreadId(e.threadId) || ns === undefined) return undefined;
  return {
    subject: `${DISCUSSION_SUBJECT_PREFIX}.${ns}.${e.threadId}.${e.kind}`,
    data: encodeJson({ v: 1, agent: e.agent }),
  };
}

/** The event a message carries, or why it was skipped. Never throws. */
export function decodeDiscussionEvent(
  subject: string,
  data: Uint8Array,
): { event: DiscussionEvent; reason?: undefined } | { event: undefined; reason: string } {
  const parts = subject.split(".");
  if (parts.length !== 5 || `${parts[0]}.${parts[1]}` !== DISCUSSION_SUBJECT_PREFIX)
    return { event: undefined, reason: "not a discussion subject" };
  const [, , namespace = "", threadId = "", kind = ""] = parts;
  if (!isDiscussionThreadId(threadId)) return { event: undefined, reason: "bad thread id" };
  if (!(DISCUSSION_EVENTS as readonly string[]).includes(kind))
    return { event: undefined, reason: `unknown event ${JSON.stringify(kind.slice(0, 32))}` };
  let v: unknown;
  try {
    v = decodeJson(data);
  } catch {
    return { event: undefined, reason: "not JSON" };
  }
  const o = v as { v?: unknown; agent?: unknown } | null;
  if (typeof o !== "object" || o === null || o.v !== 1) return { event: undefined, reason: "not version 1" };
  if (typeof o.agent !== "string" || o.agent.length > MAX_AGENT || !AGENT.test(o.agent))
    return { event: undefined, reason: "agent is not namespace/name" };
  if (namespaceToken(o.agent) !== namespace)
    return { event: undefined, reason: "agent is not in the subject's namespace" };
  return { event: { kind: kind as DiscussionEventKind, threadId, agent: o.agent } };
}
