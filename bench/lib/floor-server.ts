// A second reference for the place benchmark: the least any sidecar could do for Place+Release
// with this claim protocol. It serves the same two RPCs on the sidecar's own API server
// (sidecar/api: connect-node, the same port handling, no interceptors of the sidecar's) and
// does only the NATS work a warm claim needs — Place writes a ticket (update at revision 0) and
// answers once it is acknowledged; Release sends the delete and answers without waiting, as the
// sidecar does — while a watch follows the tickets bucket as the sidecar's copy does. No
// decision, no bookkeeping. Prints "listening <port>" when ready.
import { randomUUID } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { startApiServer } from "../../sidecar/api/index.js";
import type { SchedulerService } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { bucketSettings, connectNatsKv, PROVIDER_TICKETS_BUCKET } from "../../src/state/index.js";
import { encodeJson } from "../../src/state/kv.js";
import { ticketJson } from "../../src/state/ticket-codec.js";

const [natsUrl, bucketName = PROVIDER_TICKETS_BUCKET] = process.argv.slice(2);
if (!natsUrl) throw new Error("usage: floor-server <nats-url> [bucket]");
const kv = await connectNatsKv({ servers: natsUrl });
// The tickets bucket's settings, under the name given.
const bucket = await kv.bucket(bucketName, bucketSettings(1)[PROVIDER_TICKETS_BUCKET]!);
const watch = await bucket.watch({ include: "updates" });
void (async () => {
  for await (const _ of watch) {
    // Followed and dropped: the cost of receiving every write is what this stands for.
  }
})();

const floor: Pick<ServiceImpl<typeof SchedulerService>, "place" | "release"> = {
  async place() {
    const ticketId = randomUUID();
    const now = Date.now();
    const ticket = {
      ticketId,
      provider: "bench-gpu",
      modelFootprintMiB: 4863,
      kvCacheFootprintMiB: 0,
      holderId: "floor",
      claimedAt: new Date(now).toISOString(),
      modelName: "qwen3:8b",
      evicts: {},
      expiresAt: now + 150_000,
      coldLoad: false,
    };
    await bucket.update(`bench-gpu__${ticketId}`, encodeJson(ticketJson(ticket)), 0);
    return { result: { case: "placement", value: { ticketId, provider: "bench-gpu", model: "qwen3:8b" } } };
  },
  release(req) {
    bucket.delete(`bench-gpu__${req.ticketId}`).catch(() => undefined);
    return { released: true };
  },
};

// The other methods answer UNIMPLEMENTED, as connect does for a method left out.
const api = await startApiServer({
  host: "127.0.0.1",
  port: 0,
  impl: floor as ServiceImpl<typeof SchedulerService>,
});
process.stdout.write(`listening ${api.port}\n`);
process.on("SIGTERM", () => {
  void api
    .close()
    .then(() => kv.close())
    .finally(() => process.exit(0));
});
