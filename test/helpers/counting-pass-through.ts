// A counting pass-through in front of an Ollama-style engine (test and bench instrumentation,
// docs/rules/state.md §1 "Slots"): it forwards every byte unchanged and records, per model, how
// many generation requests (/api/chat, /api/generate) the engine holds at once, and the most.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface CountingPassThrough {
  url: string;
  /** The most generation requests in flight at once, per model. */
  most: () => Map<string, number>;
  /** Starts a new count of the most (requests in flight stay counted). */
  resetMost: () => void;
  close: () => Promise<void>;
}

export function countingPassThrough(target: string): Promise<CountingPassThrough> {
  const t = new URL(target);
  const now = new Map<string, number>();
  const most = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      let model = "";
      if (req.url === "/api/chat" || req.url === "/api/generate") {
        try {
          model = String((JSON.parse(body.toString("utf8")) as { model?: string }).model ?? "");
        } catch {
          model = "?";
        }
      }
      if (model !== "") {
        const n = (now.get(model) ?? 0) + 1;
        now.set(model, n);
        most.set(model, Math.max(most.get(model) ?? 0, n));
      }
      let done = false;
      const end = () => {
        if (!done && model !== "") now.set(model, (now.get(model) ?? 1) - 1);
        done = true;
      };
      const up = http.request(
        { host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
          r.on("end", end);
        },
      );
      up.on("error", () => {
        end();
        res.destroy();
      });
      up.end(body);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        most: () => most,
        resetMost: () => most.clear(),
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
