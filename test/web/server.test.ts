// The web view's server over real HTTP (docs/web-view.md "Routes", "Security", "Bounds"): every
// bad request gets its status and a JSON error, never a crash; the token is asked for and
// checked; a browser that stops reading is dropped while one that reads gets every decision, and
// a reconnecting one starts from a snapshot with what it missed.
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log/index.js";
import { MemoryKvStore, openStateStore, type StateStore } from "../../src/state/index.js";
import { startWebView, type WebView } from "../../src/web/index.js";
import { waitUntil } from "../helpers/wait-until.js";

const TOKEN = "a-web-token-of-some-length";
const open: { view: WebView; state: StateStore }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.view.close();
    await o.state.close();
  }
});

async function start(o: { token?: string; maxDecisionsPerS?: number } = {}) {
  const kv = new MemoryKvStore();
  const state = await openStateStore(kv, { logger: silentLogger });
  const view = await startWebView({
    listen: "127.0.0.1:0",
    state,
    logger: silentLogger,
    ...(o.token ? { token: o.token } : {}),
    hub: { refreshMinMs: 50, ...(o.maxDecisionsPerS ? { maxDecisionsPerS: o.maxDecisionsPerS } : {}) },
  });
  open.push({ view, state });
  return { view, state, kv };
}

/** A decision record as a sidecar publishes it; `pad` bytes more of attribution (within the cap). */
function record(n: number, pad = 0): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({
      v: 1,
      id: `call-${n}`,
      at: Date.now(),
      kind: "placed",
      agent: "crew/agent",
      crew: "crew",
      instance: "test",
      model: "qwen3:8b",
      provider: "rtx-4090",
      waitMs: 12,
      policy: "time",
      weight: 1,
      // Free text is cut to 240 characters: the size comes from many fields.
      attribution: Object.fromEntries(
        Array.from({ length: Math.ceil(pad / 230) }, (_, i) => [`f${i}`, "x".repeat(230)]),
      ),
    }),
  );
}

async function errorOf(
  res: Response,
): Promise<{ status: number; error: string; reason: string; field?: string }> {
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
  const body = (await res.json()) as { error: string; reason: string; field?: string };
  expect(typeof body.error).toBe("string");
  return { status: res.status, ...body };
}

describe("web view routes", () => {
  it("answers bad requests with their status and a JSON error", async () => {
    const { view } = await start();
    const u = view.url;
    expect(await errorOf(await fetch(`${u}nowhere`))).toMatchObject({ status: 404, reason: "not-found" });
    expect(await errorOf(await fetch(`${u}api/snapshot`, { method: "DELETE" }))).toMatchObject({
      status: 405,
      reason: "method-not-allowed",
    });
    expect(await errorOf(await fetch(`${u}api/decisions?limit=0`))).toMatchObject({
      status: 400,
      field: "limit",
    });
    expect(await errorOf(await fetch(`${u}api/decisions?limit=5&limit=6`))).toMatchObject({ status: 400 });
    expect(await errorOf(await fetch(`${u}api/decisions?kind=all`))).toMatchObject({
      status: 400,
      field: "kind",
    });
    expect(await errorOf(await fetch(`${u}api/trends?minutes=61`))).toMatchObject({
      status: 400,
      field: "minutes",
    });
    expect(await errorOf(await fetch(`${u}api/snapshot?x=1`))).toMatchObject({ status: 400, field: "x" });
    expect(await errorOf(await fetch(`${u}api/decisions?kind=${"p".repeat(3000)}`))).toMatchObject({
      status: 400,
    });
    expect(await errorOf(await fetch(`${u}api/calls/..%2Fetc`))).toMatchObject({ status: 400, field: "id" });
    expect(await errorOf(await fetch(`${u}api/calls/unknown-call`))).toMatchObject({ status: 404 });
    // Still serving after all that.
    const ok = await fetch(`${u}api/decisions?limit=5&kind=placed`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ decisions: [] });
    const head = await fetch(`${u}api/snapshot`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("asks for its token: 401 without or with a wrong one, in by header, by ?token= then cookie", async () => {
    const { view } = await start({ token: TOKEN });
    const u = view.url;
    expect(await errorOf(await fetch(`${u}api/snapshot`))).toMatchObject({
      status: 401,
      reason: "unauthenticated",
    });
    const wrong = await fetch(`${u}api/snapshot`, {
      headers: { authorization: "Bearer not-the-token-at-all" },
    });
    expect(wrong.headers.get("www-authenticate")).toContain("Bearer");
    expect(await errorOf(wrong)).toMatchObject({ status: 401 });
    expect(await errorOf(await fetch(`${u}?token=nope-nope-nope-nope`))).toMatchObject({ status: 401 });
    const byHeader = await fetch(`${u}api/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(byHeader.status).toBe(200);
    const login = await fetch(`${u}?token=${TOKEN}`, { redirect: "manual" });
    expect(login.status).toBe(303);
    expect(login.headers.get("location")).toBe("./");
    const cookie = login.headers.get("set-cookie")!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const byCookie = await fetch(`${u}api/snapshot`, { headers: { cookie: cookie.split(";")[0]! } });
    expect(byCookie.status).toBe(200);
    // Health needs no token (the kubelet's probe).
    expect((await fetch(`${u}healthz`)).status).toBe(200);
  });

  it("drops a browser that stops reading, keeps one that reads, and resynchronises with a snapshot", async () => {
    const { view, kv } = await start({ maxDecisionsPerS: 1e9 });
    const port = Number(new URL(view.url).port);
    // A browser that never reads again after its request.
    const stalled = net.connect(port, "127.0.0.1");
    await new Promise<void>((r) => stalled.once("connect", () => r()));
    stalled.write("GET /api/events HTTP/1.1\r\nHost: view\r\n\r\n");
    stalled.pause();
    // One that reads everything.
    let got = 0;
    const reader = new AbortController();
    const reading = (async () => {
      const res = await fetch(`${view.url}api/events`, { signal: reader.signal });
      const decoder = new TextDecoder();
      let buf = "";
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true });
          const frames = buf.split("\n\n");
          buf = frames.pop()!;
          for (const f of frames) if (f.startsWith("event: decision\n")) got++;
        }
      } catch {
        // aborted at the end
      }
    })();
    await waitUntil(() => view.hub.clientCount === 2, 5000, "both browsers following");
    // About 11 MB: far more than the 1 MiB backlog a browser may have, at a pace a reading
    // browser keeps up with.
    const N = 3000;
    for (let n = 0; n < N; n++) {
      kv.messages.publish("kubemoot.decisions.crew", record(n, 3000));
      if (n % 20 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    await waitUntil(() => view.hub.clientCount === 1, 30_000, "the stalled browser dropped");
    await waitUntil(() => got === N, 30_000, `the reading browser got all ${N} decisions (got ${got})`);
    reader.abort();
    await reading;
    stalled.destroy();
    // A browser that comes back starts from a snapshot holding the newest decisions.
    const again = await fetch(`${view.url}api/events`);
    const r = again.body!.getReader();
    const marker = "event: snapshot\ndata: ";
    let text = "";
    while (!(text.includes(marker) && text.slice(text.indexOf(marker)).includes("\n\n"))) {
      const next = await r.read();
      if (next.done) break;
      text += new TextDecoder().decode(next.value);
    }
    await r.cancel();
    const data = text.slice(text.indexOf(marker) + marker.length);
    const snapshot = JSON.parse(data.slice(0, data.indexOf("\n\n"))) as { decisions: { id: string }[] };
    expect(snapshot.decisions[0]!.id).toBe(`call-${N - 1}`);
    expect(snapshot.decisions).toHaveLength(200);
  }, 60_000);
});
