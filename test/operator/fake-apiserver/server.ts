// A FAKE Kubernetes API server, for tests only. No kube-apiserver is available to the test
// suite, so this in-process node:http server speaks enough of the real wire protocol for
// @kubernetes/client-node to run against it unchanged:
//
// - list:   GET /apis/{group}/{version}[/namespaces/{ns}]/{plural}  → {kind: XList, metadata:
//           {resourceVersion}, items}; core resources under /api/v1
// - watch:  the same with ?watch=true&resourceVersion=N → a chunked stream of JSON lines
//           {"type": ADDED|MODIFIED|DELETED|ERROR, "object": …}, replaying the changes after N
//           (or synthetic ADDED for everything when N is empty or 0); an N older than the last
//           compact() gets ERROR with a 410 Expired Status, and the stream ends, as kube does
// - get, create (POST), delete on items; PATCH on items and on the /status subresource
// - /status accepts ONLY application/merge-patch+json (415 otherwise), and applies only the
//   status part; a PATCH of the main resource ignores status (the subresource rule)
// - PATCH on the main resource accepts application/json-patch+json (add, remove, replace,
//   test; a failed test is 422) and application/merge-patch+json; strategic merge patch is
//   NOT implemented by this fake (415)
// - every write bumps a global resourceVersion; spec changes bump metadata.generation
// - POST events under /api/v1/namespaces/{ns}/events and /apis/events.k8s.io/v1/…
//
// Test controls: apply/remove objects (as kubectl would), record every request (method, path,
// query, Content-Type, body, time, status), inject failures (fail), close or break every open
// watch stream, and compact history (410 on resume).
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { applyJsonPatch, applyMergePatch, clone, PatchError } from "./patch.js";
import {
  apiVersion,
  defKey,
  FAKE_RESOURCES,
  matchesSelector,
  type Obj,
  type ResourceDef,
  routeOf,
} from "./resources.js";
import { sendJson, sendStatus, statusReason } from "./responses.js";

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  body: unknown;
  /** Date.now() when the request arrived. */
  at: number;
  status: number;
  watch: boolean;
}

export interface Fault {
  method?: string;
  /** Substring of the path. */
  path?: string;
  /** Only watch requests (true) or only non-watch requests (false). */
  watch?: boolean;
  status: number;
  /** How many matching requests fail; default 1. */
  times?: number;
  message?: string;
}

interface WatchConn {
  def: ResourceDef;
  namespace: string | undefined;
  res: ServerResponse;
}

interface Change {
  rv: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  def: ResourceDef;
  object: Obj;
}

const objKey = (ns: string | undefined, name: string) => `${ns ?? ""}/${name}`;

export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private rv = 100;
  private compactedRv = 0;
  private readonly store = new Map<string, Map<string, Obj>>();
  private readonly history: Change[] = [];
  private readonly watches = new Set<WatchConn>();
  private faults: (Fault & { left: number })[] = [];
  private uidSeq = 0;

  private constructor() {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendStatus(res, 500, "InternalError", String(err));
        else res.destroy();
      });
    });
  }

  static async start(): Promise<FakeApiServer> {
    const s = new FakeApiServer();
    s.server.listen(0, "127.0.0.1");
    await once(s.server, "listening");
    return s;
  }

  get url(): string {
    const a = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${a.port}`;
  }

  async close(): Promise<void> {
    for (const w of this.watches) w.res.destroy();
    this.watches.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- test controls ---------------------------------------------------------------------

  /** Creates or replaces an object as given (status included), like a test fixture would. */
  apply(input: object): Obj {
    const obj = clone(input) as Obj;
    const def = this.defFor(String(obj.apiVersion), String(obj.kind));
    const meta = obj.metadata;
    const name = String(meta.name);
    const ns = def.namespaced ? String(meta.namespace ?? "default") : undefined;
    if (def.namespaced) meta.namespace = ns!;
    const bucket = this.bucket(def);
    const prev = bucket.get(objKey(ns, name));
    meta.uid = prev?.metadata.uid ?? `uid-${++this.uidSeq}`;
    const prevGen = Number(prev?.metadata.generation ?? 0);
    meta.generation = prev && JSON.stringify(prev.spec) === JSON.stringify(obj.spec) ? prevGen : prevGen + 1;
    meta.resourceVersion = String(++this.rv);
    bucket.set(objKey(ns, name), obj);
    this.emit(prev ? "MODIFIED" : "ADDED", def, obj);
    return clone(obj);
  }

  /** Deletes an object; returns whether it existed. */
  remove(apiVersion: string, kind: string, namespace: string | undefined, name: string): boolean {
    const def = this.defFor(apiVersion, kind);
    const bucket = this.bucket(def);
    const key = objKey(def.namespaced ? namespace : undefined, name);
    const prev = bucket.get(key);
    if (!prev) return false;
    bucket.delete(key);
    const gone = clone(prev);
    gone.metadata.resourceVersion = String(++this.rv);
    this.emit("DELETED", def, gone);
    return true;
  }

  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): Obj | undefined {
    const def = this.defFor(apiVersion, kind);
    const o = this.bucket(def).get(objKey(def.namespaced ? namespace : undefined, name));
    return o ? clone(o) : undefined;
  }

  /** Events posted through either events API. */
  events(): Obj[] {
    return FAKE_RESOURCES.filter((d) => d.kind === "Event").flatMap((d) => [...this.bucket(d).values()]);
  }

  /** Makes the next matching requests fail with `status`. */
  fail(fault: Fault): void {
    this.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /** Ends every open watch stream cleanly (what the API server does at its watch timeout). */
  closeWatches(): number {
    const n = this.watches.size;
    for (const w of this.watches) w.res.end();
    this.watches.clear();
    return n;
  }

  /** Destroys every open watch connection mid-stream (a network error for the client). */
  breakWatches(): number {
    const n = this.watches.size;
    for (const w of this.watches) w.res.destroy();
    this.watches.clear();
    return n;
  }

  /** Forgets history: watches resuming from an older resourceVersion get 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv;
  }

  /** Open watch streams on a plural (e.g. `agents`). */
  openWatches(plural?: string): number {
    return [...this.watches].filter((w) => plural === undefined || w.def.plural === plural).length;
  }

  /** Recorded requests matching a method and a path substring. */
  requestsTo(method: string, pathPart: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.includes(pathPart));
  }

  // ---- HTTP ------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const query = Object.fromEntries(url.searchParams.entries());
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown;
    if (text !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const contentType = req.headers["content-type"]?.split(";")[0]?.trim();
    const method = req.method ?? "GET";
    const watch = query.watch === "true" || query.watch === "1";
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      query,
      contentType,
      body,
      at: Date.now(),
      status: 0,
      watch,
    };
    this.requests.push(record);
    const setStatus = (n: number) => {
      record.status = n;
    };

    const fault = this.faults.find(
      (f) =>
        f.left > 0 &&
        (f.method === undefined || f.method === method) &&
        (f.path === undefined || url.pathname.includes(f.path)) &&
        (f.watch === undefined || f.watch === watch),
    );
    if (fault) {
      fault.left -= 1;
      this.faults = this.faults.filter((f) => f.left > 0);
      setStatus(fault.status);
      return sendStatus(
        res,
        fault.status,
        "InjectedFault",
        fault.message ?? "injected by the FAKE API server",
      );
    }

    const route = routeOf(url.pathname);
    if (!route) {
      setStatus(404);
      return sendStatus(res, 404, "NotFound", `the FAKE API server does not serve ${url.pathname}`);
    }
    const { def, namespace, name, sub } = route;
    try {
      if (name === undefined) {
        if (method === "GET" && watch) {
          setStatus(200);
          return this.watch(res, def, namespace, query.resourceVersion);
        }
        if (method === "GET") {
          setStatus(200);
          return sendJson(res, 200, this.listObject(def, namespace, query.labelSelector));
        }
        if (method === "POST") {
          const created = this.create(def, namespace, body);
          setStatus(201);
          return sendJson(res, 201, created);
        }
      } else {
        const current = this.bucket(def).get(objKey(namespace, name));
        if (method === "GET") {
          if (!current) {
            setStatus(404);
            return sendStatus(res, 404, "NotFound", `${def.plural} "${name}" not found`);
          }
          setStatus(200);
          return sendJson(res, 200, current);
        }
        if (method === "PATCH") {
          if (!current) {
            setStatus(404);
            return sendStatus(res, 404, "NotFound", `${def.plural} "${name}" not found`);
          }
          const out = this.patch(def, current, sub, contentType, body);
          setStatus(200);
          return sendJson(res, 200, out);
        }
        if (method === "PUT") {
          if (!current) {
            setStatus(404);
            return sendStatus(res, 404, "NotFound", `${def.plural} "${name}" not found`);
          }
          const out = this.replace(def, current, body);
          setStatus(200);
          return sendJson(res, 200, out);
        }
        if (method === "DELETE") {
          const ok = this.remove(apiVersion(def), def.kind, namespace, name);
          setStatus(ok ? 200 : 404);
          return ok
            ? sendStatus(res, 200, "Success", "deleted")
            : sendStatus(res, 404, "NotFound", `${def.plural} "${name}" not found`);
        }
      }
      setStatus(405);
      return sendStatus(
        res,
        405,
        "MethodNotAllowed",
        `${method} is not supported by the FAKE API server here`,
      );
    } catch (err) {
      const status = err instanceof PatchError ? err.status : 500;
      setStatus(status);
      return sendStatus(res, status, statusReason(status), (err as Error).message);
    }
  }

  private listObject(def: ResourceDef, namespace: string | undefined, labelSelector: string | undefined) {
    const items = [...this.bucket(def).values()]
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .filter((o) => matchesSelector(o, labelSelector))
      .sort((a, b) => String(a.metadata.resourceVersion).localeCompare(String(b.metadata.resourceVersion)));
    return {
      apiVersion: apiVersion(def),
      kind: `${def.kind}List`,
      metadata: { resourceVersion: String(this.rv) },
      items,
    };
  }

  private watch(
    res: ServerResponse,
    def: ResourceDef,
    namespace: string | undefined,
    from: string | undefined,
  ) {
    res.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
    res.flushHeaders();
    const matches = (c: { def: ResourceDef; object: Obj }) =>
      defKey(c.def) === defKey(def) && (namespace === undefined || c.object.metadata.namespace === namespace);
    if (from === undefined || from === "" || from === "0") {
      for (const object of this.bucket(def).values()) {
        if (matches({ def, object })) res.write(`${JSON.stringify({ type: "ADDED", object })}\n`);
      }
    } else {
      const n = Number(from);
      if (!Number.isFinite(n) || n < this.compactedRv) {
        const status = {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `too old resource version: ${from} (${this.compactedRv})`,
          reason: "Expired",
          code: 410,
        };
        res.end(`${JSON.stringify({ type: "ERROR", object: status })}\n`);
        return;
      }
      for (const c of this.history) {
        if (c.rv > n && matches(c)) res.write(`${JSON.stringify({ type: c.type, object: c.object })}\n`);
      }
    }
    const conn: WatchConn = { def, namespace, res };
    this.watches.add(conn);
    res.on("close", () => this.watches.delete(conn));
  }

  /** PUT: replaces the object; a stale metadata.resourceVersion is a 409 Conflict, as on kube. */
  private replace(def: ResourceDef, current: Obj, body: unknown): Obj {
    if (typeof body !== "object" || body === null) throw new PatchError(400, "expected a JSON object");
    const obj = clone(body) as Obj;
    obj.metadata ??= {};
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== current.metadata.resourceVersion) {
      throw new PatchError(
        409,
        `Operation cannot be fulfilled on ${def.plural} "${String(current.metadata.name)}": the object has been modified`,
      );
    }
    obj.metadata.name = current.metadata.name!;
    if (def.namespaced) obj.metadata.namespace = current.metadata.namespace!;
    obj.apiVersion ??= apiVersion(def);
    obj.kind ??= def.kind;
    // The status subresource rule: a replace of the main resource keeps the stored status.
    if (def.statusSubresource) obj.status = current.status ?? {};
    return this.apply(obj);
  }

  private create(def: ResourceDef, namespace: string | undefined, body: unknown): Obj {
    if (typeof body !== "object" || body === null) throw new PatchError(400, "expected a JSON object");
    const obj = clone(body) as Obj;
    obj.metadata ??= {};
    const meta = obj.metadata;
    if (meta.name === undefined && typeof meta.generateName === "string") {
      meta.name = `${meta.generateName}${(++this.uidSeq).toString(36)}`;
    }
    if (typeof meta.name !== "string" || meta.name === "")
      throw new PatchError(422, "metadata.name: Required value");
    if (def.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== namespace) {
        throw new PatchError(400, "the namespace of the object does not match the namespace of the request");
      }
      meta.namespace = namespace!;
    }
    obj.apiVersion ??= apiVersion(def);
    obj.kind ??= def.kind;
    if (this.bucket(def).has(objKey(namespace, meta.name))) {
      throw new PatchError(409, `${def.plural} "${meta.name}" already exists`);
    }
    return this.apply(obj);
  }

  private patch(
    def: ResourceDef,
    current: Obj,
    sub: string | undefined,
    contentType: string | undefined,
    body: unknown,
  ): Obj {
    let next: Obj;
    if (sub === "status") {
      if (contentType !== "application/merge-patch+json") {
        throw new PatchError(
          415,
          `the FAKE API server accepts only application/merge-patch+json on /status, got ${contentType ?? "none"}`,
        );
      }
      const merged = applyMergePatch(current, body) as Obj;
      next = clone(current);
      if (merged.status === undefined) delete next.status;
      else next.status = merged.status;
    } else {
      if (contentType === "application/json-patch+json") next = applyJsonPatch(current, body) as Obj;
      else if (contentType === "application/merge-patch+json") next = applyMergePatch(current, body) as Obj;
      else {
        throw new PatchError(415, `unsupported media type ${contentType ?? "none"} (FAKE API server)`);
      }
      if (def.statusSubresource) {
        if (current.status === undefined) delete next.status;
        else next.status = clone(current.status);
      }
      // Identity fields cannot be patched.
      next.metadata.name = current.metadata.name!;
      if (current.metadata.namespace !== undefined) next.metadata.namespace = current.metadata.namespace;
    }
    if (JSON.stringify(next) === JSON.stringify(current)) return clone(current);
    return this.apply(next);
  }

  private emit(type: Change["type"], def: ResourceDef, object: Obj): void {
    const change: Change = { rv: Number(object.metadata.resourceVersion), type, def, object: clone(object) };
    this.history.push(change);
    const line = `${JSON.stringify({ type, object: change.object })}\n`;
    for (const w of this.watches) {
      if (defKey(w.def) !== defKey(def)) continue;
      if (w.namespace !== undefined && object.metadata.namespace !== w.namespace) continue;
      w.res.write(line);
    }
  }

  private defFor(apiVer: string, kind: string): ResourceDef {
    const def = FAKE_RESOURCES.find((d) => apiVersion(d) === apiVer && d.kind === kind);
    if (!def) throw new Error(`FAKE API server: unknown resource ${apiVer} ${kind}`);
    return def;
  }

  private bucket(def: ResourceDef): Map<string, Obj> {
    let b = this.store.get(defKey(def));
    if (!b) {
      b = new Map();
      this.store.set(defKey(def), b);
    }
    return b;
  }
}
