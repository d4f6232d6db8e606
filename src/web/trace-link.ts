// A call's trace link in the web view (docs/web-view.md "A call's story"): the W3C trace id a
// decision record carries, put into the operator's template (KUBEMOOT_WEB_TRACE_URL, checked at
// start by src/settings/web.ts). Import-free: the record reader (./decision-record.ts) and the
// page (web/src) both use it.

/** Where the template takes the trace id. */
export const TRACE_ID_SLOT = "{traceId}";

const TRACE_ID = /^[0-9a-f]{32}$/;

/** A W3C trace id as records carry it: 32 lowercase hex digits. */
export function isTraceId(v: string): boolean {
  return TRACE_ID.test(v);
}

/**
 * The link to `traceId`'s trace: `template` with the id in every slot. Undefined (show the id as
 * text) without a template, when the template is not an http(s) URL with a slot, or when the id
 * is not a trace id: only 32 hex digits ever enter a link.
 */
export function traceLink(template: string | undefined, traceId: string): string | undefined {
  if (!template || !/^https?:\/\//i.test(template) || !template.includes(TRACE_ID_SLOT)) return undefined;
  if (!isTraceId(traceId)) return undefined;
  return template.replaceAll(TRACE_ID_SLOT, encodeURIComponent(traceId));
}
