// Real nats-server processes for integration tests: one JetStream server on a free loopback
// port with a temporary store directory, a three-node cluster with routes on loopback, a hub
// and a leaf node in two JetStream domains, or one account using another account's JetStream.
// A missing nats-server binary is an error (the suite must fail, never skip).
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const NOT_FOUND =
  "nats-server not found on PATH: install it (apt-get install -y nats-server) — integration tests need a real server";

/** Absolute path of the nats-server binary; throws a clear error when it is not installed. */
export function natsServerBinary(): string {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/local/bin", "/usr/bin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    const candidate = path.join(dir, "nats-server");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  throw new Error(NOT_FOUND);
}

/**
 * Whether a server failed because a port chosen by freePort was taken in the meantime (another
 * process got it from the ephemeral range between our release and the server's bind).
 */
function portTaken(err: unknown): boolean {
  return err instanceof Error && err.message.includes("address already in use");
}

/** Tries `start` up to three times while it fails on a port taken meanwhile. */
async function withFreshPorts<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3 || !portTaken(err)) throw err;
    }
  }
}

/** A free TCP port on 127.0.0.1 (released again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

// Servers die with the process that started them, however it ends.
const live = new Set<ChildProcess>();
const killAll = () => {
  for (const p of live) p.kill("SIGKILL");
};
process.once("exit", killAll);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

export interface NatsServerOptions {
  /** Client port; default a free one. */
  port?: number;
  /** JetStream store directory; default a fresh temporary directory (removed by `dispose`). */
  storeDir?: string;
  /** Cluster settings (used by startNatsCluster). */
  cluster?: { name: string; serverName: string; port: number; routes: string[] };
  /** How long to wait for readiness (ms); default 15000. */
  readyTimeoutMs?: number;
  /** More command-line arguments (e.g. --tls ...). */
  extraArgs?: string[];
  /**
   * Configuration file text (JetStream domain, leaf nodes, accounts), passed with -c; the
   * command-line flags still set the address, port, store and monitoring port.
   */
  config?: string;
}

export class NatsServer {
  private proc: ChildProcess | null = null;
  private logTail = "";
  private readonly ownsDir: boolean;
  readonly storeDir: string;
  readonly url: string;

  private constructor(
    readonly port: number,
    private readonly monitorPort: number,
    storeDir: string | undefined,
    private readonly options: NatsServerOptions,
  ) {
    this.ownsDir = storeDir === undefined;
    this.storeDir = storeDir ?? mkdtempSync(path.join(os.tmpdir(), "kubemoot-nats-"));
    this.url = `nats://127.0.0.1:${port}`;
  }

  /** The server's monitoring endpoint (`/varz`, `/connz`, ...). */
  get monitorUrl(): string {
    return `http://127.0.0.1:${this.monitorPort}`;
  }

  /** Starts `nats-server -js -a 127.0.0.1 -p <port> -sd <dir>` and waits until it serves. */
  static async start(options: NatsServerOptions = {}): Promise<NatsServer> {
    natsServerBinary();
    const launch = async () => {
      const port = options.port ?? (await freePort());
      const server = new NatsServer(port, await freePort(), options.storeDir, options);
      await server.launch();
      return server;
    };
    // Ports given by the caller are theirs to choose again; ours are chosen afresh.
    return options.port === undefined && options.cluster === undefined ? withFreshPorts(launch) : launch();
  }

  /** The server's recent log (the last 16 kB of its stderr), e.g. to find a permissions violation. */
  log(): string {
    return this.logTail;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return this.proc !== null;
  }

  /** Starts the process again on the same port and store directory. */
  async restart(): Promise<void> {
    if (this.proc !== null) await this.stop();
    await this.launch();
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  async stop(graceMs = 5000): Promise<void> {
    const p = this.proc;
    if (p === null) return;
    const exited = waitExit(p);
    p.kill("SIGTERM");
    const timer = setTimeout(() => p.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
    this.proc = null;
  }

  /** SIGKILL (a crash). */
  async kill(): Promise<void> {
    const p = this.proc;
    if (p === null) return;
    const exited = waitExit(p);
    p.kill("SIGKILL");
    await exited;
    this.proc = null;
  }

  /** Stops the server and removes a temporary store directory it created. */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.ownsDir) rmSync(this.storeDir, { recursive: true, force: true });
    if (this.options.config !== undefined) {
      rmSync(path.join(this.storeDir, "..", `${path.basename(this.storeDir)}.conf`), { force: true });
    }
  }

  /** Waits until this server has `count` leaf node connections (ms: how long at most). */
  async waitLeafNodes(count: number, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`http://127.0.0.1:${this.monitorPort}/leafz`);
        const body = (await res.json()) as { leafnodes?: number };
        if ((body.leafnodes ?? 0) >= count) return;
        last = JSON.stringify(body).slice(0, 200);
      } catch (err) {
        last = String(err);
      }
      await sleep(50);
    }
    throw new Error(
      `nats-server on port ${this.port}: no ${count} leaf node connection(s) after ${timeoutMs} ms: ${last}`,
    );
  }

  private async launch(): Promise<void> {
    const args = [
      "-js",
      "-a",
      "127.0.0.1",
      "-p",
      String(this.port),
      "-sd",
      this.storeDir,
      "-m",
      String(this.monitorPort),
    ];
    const c = this.options.cluster;
    if (c !== undefined) {
      args.push(
        "--server_name",
        c.serverName,
        "--cluster_name",
        c.name,
        "--cluster",
        `nats://127.0.0.1:${c.port}`,
        "--routes",
        c.routes.join(","),
      );
    }
    if (this.options.config !== undefined) {
      const file = path.join(this.storeDir, "..", `${path.basename(this.storeDir)}.conf`);
      writeFileSync(file, this.options.config);
      args.push("-c", file);
    }
    args.push(...(this.options.extraArgs ?? []));
    const proc = spawn(natsServerBinary(), args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    proc.stderr?.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
      this.logTail = (this.logTail + d.toString()).slice(-16_000);
    });
    live.add(proc);
    proc.once("exit", () => live.delete(proc));
    this.proc = proc;
    const failed = new Promise<never>((_, reject) => {
      proc.once("error", (err) => reject(err));
      proc.once("exit", (code) => reject(new Error(`nats-server exited early (code ${code}): ${stderr}`)));
    });
    failed.catch(() => undefined);
    await Promise.race([this.waitReady(this.options.readyTimeoutMs ?? 15_000), failed]);
  }

  /** Waits until JetStream answers /healthz (which, in a cluster, also needs a meta leader). */
  private async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`http://127.0.0.1:${this.monitorPort}/healthz`);
        last = await res.text();
        if (res.ok) return;
      } catch (err) {
        last = String(err);
      }
      await sleep(50);
    }
    throw new Error(`nats-server on port ${this.port} not ready after ${timeoutMs} ms: ${last}`);
  }
}

function waitExit(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => p.once("exit", () => resolve()));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export interface NatsCluster {
  servers: NatsServer[];
  /** Client URLs of all nodes (give them all to a client). */
  urls: string[];
  dispose(): Promise<void>;
}

/** Starts `size` JetStream servers (default 3) joined by routes on loopback. */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  natsServerBinary();
  const servers = await withFreshPorts(async () => {
    const clusterPorts: number[] = [];
    for (let i = 0; i < size; i++) clusterPorts.push(await freePort());
    const routes = clusterPorts.map((p) => `nats://127.0.0.1:${p}`);
    const name = `kubemoot-test-${process.pid}`;
    const started = await Promise.allSettled(
      clusterPorts.map((port, i) =>
        NatsServer.start({
          cluster: { name, serverName: `n${i + 1}`, port, routes },
          readyTimeoutMs: 30_000,
        }),
      ),
    );
    const failed = started.find((r) => r.status === "rejected");
    if (failed) {
      // None of a half-started cluster is kept: the next attempt starts all on new ports.
      await Promise.all(started.map((r) => (r.status === "fulfilled" ? r.value.dispose() : undefined)));
      throw failed.reason;
    }
    return started.map((r) => (r as PromiseFulfilledResult<NatsServer>).value);
  });
  return {
    servers,
    urls: servers.map((s) => s.url),
    dispose: async () => {
      await Promise.all(servers.map((s) => s.dispose()));
    },
  };
}

export interface NatsLeafDomains {
  /** The server of the JetStream domain "hub", which holds the buckets. */
  hub: NatsServer;
  /** A leaf node with a JetStream domain of its own ("leaf"); clients connect here. */
  leaf: NatsServer;
  /** The domain clients on the leaf name to reach the hub's JetStream. */
  domain: string;
  dispose(): Promise<void>;
}

/**
 * A hub in JetStream domain "hub" and a leaf node in domain "leaf" connected to it. A client
 * of the leaf reaches the hub's JetStream only through the domain's API prefix: the leaf
 * connection maps `$JS.hub.API.>` (and KV subjects under it) back onto the hub's.
 */
export async function startNatsLeafDomains(): Promise<NatsLeafDomains> {
  const leafPort = await freePort();
  const hub = await NatsServer.start({
    config: `jetstream { domain: hub }\nleafnodes { listen: "127.0.0.1:${leafPort}" }\n`,
  });
  const leaf = await NatsServer.start({
    config: `jetstream { domain: leaf }\nleafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${leafPort}" } ] }\n`,
  }).catch(async (err: unknown) => {
    await hub.dispose();
    throw err;
  });
  const pair: NatsLeafDomains = {
    hub,
    leaf,
    domain: "hub",
    dispose: async () => {
      await leaf.dispose();
      await hub.dispose();
    },
  };
  try {
    await hub.waitLeafNodes(1);
  } catch (err) {
    await pair.dispose();
    throw err;
  }
  return pair;
}

export interface NatsImportedJetStream {
  server: NatsServer;
  /** Where account I reaches account A's JetStream API and KV subjects. */
  apiPrefix: string;
  /** Inbox prefix of account I's clients: A's watch deliveries reach them under it. */
  inboxPrefix: string;
  /** Credentials of account A, which owns the JetStream (unauthenticated clients are user i of I). */
  ownerUser: { user: string; pass: string };
  dispose(): Promise<void>;
}

/**
 * One server, two accounts: A has JetStream; I has none and uses A's through imports under the
 * API prefix "fromA" (API and KV subjects), A's deliveries to I's inboxes under "forI".
 */
export async function startNatsImportedJetStream(): Promise<NatsImportedJetStream> {
  const config = `
accounts: {
  A: {
    jetstream: enabled
    users: [ { user: a, password: a } ]
    exports: [ { service: "$JS.API.>" }, { service: "$KV.>" }, { stream: "forI.>" } ]
  }
  I: {
    users: [ { user: i, password: i } ]
    imports: [
      { service: { account: A, subject: "$JS.API.>" }, to: "fromA.>" }
      { service: { account: A, subject: "$KV.>" }, to: "fromA.$KV.>" }
      { stream: { account: A, subject: "forI.>" } }
    ]
  }
}
no_auth_user: i
`;
  const server = await NatsServer.start({ config });
  return {
    server,
    apiPrefix: "fromA",
    inboxPrefix: "forI",
    ownerUser: { user: "a", pass: "a" },
    dispose: () => server.dispose(),
  };
}
