// Helpers for tests that talk to an emulator over HTTP: framing parsers and polling.

/** Splits an NDJSON body into objects (throws on a line that is not JSON). */
export function parseNdjson(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Splits an SSE body into its `data:` payloads: JSON objects, or the string "[DONE]". */
export function parseSse(text: string): Array<Record<string, unknown> | "[DONE]"> {
  const out: Array<Record<string, unknown> | "[DONE]"> = [];
  for (const block of text.split("\n\n")) {
    if (block.trim() === "") continue;
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n");
    out.push(data === "[DONE]" ? "[DONE]" : (JSON.parse(data) as Record<string, unknown>));
  }
  return out;
}

/** Polls `probe` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(probe: () => Promise<T> | T, timeoutMs = 5000, everyMs = 5): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      throw new Error(`waitFor: condition not met within ${timeoutMs} ms (last: ${String(last)})`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** POSTs JSON and returns the status, content type and text of the answer. */
export async function postJson(
  url: string,
  body: unknown,
  init: { signal?: AbortSignal } = {},
): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
}
