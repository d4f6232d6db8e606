// The other sidecars bench place measures beside the plain one (docs/benchmarks.md "place"): the
// same build tracing every call (100 % sampling, exporting to a collector stand-in), and
// optionally another build's sidecar (a baseline commit), the same build with fair share off, and
// the same build called without conversation ids. Each runs on a nats-server of its own
// with the same provider state, so that no sidecar wakes for another's ticket writes while it
// is measured.

import { ProviderPublisher } from "../../src/publisher/index.js";
import { bucketSettings, connectNatsKv, PROVIDER_STATE_BUCKET } from "../../src/state/index.js";
import { ProviderStateWriter } from "../../src/state/provider-state.js";
import { schedulerClient } from "../../test/helpers/grpc-client.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../../test/helpers/sidecar-process.js";
import { childNodeArgs } from "../lib/child-node-args.js";

export interface Variant {
  name: string;
  noConversation: boolean;
  sidecar: SidecarProcess;
  client: ReturnType<typeof schedulerClient>;
  natsPid: number | undefined;
  close(): Promise<void>;
}

export interface VariantOptions {
  name: string;
  emulatorUrl: string;
  /** Added to the sidecar's environment (the OTEL_* variables of the traced one). */
  env?: Record<string, string>;
  /** Another build's bin/kubemoot-scheduler.js. */
  bin?: string;
  /** Its calls name no conversation (the plain sidecar's are turns of a full conversation table). */
  noConversation?: boolean;
}

/**
 * Publishes the emulated card as provider "bench-gpu" on `natsUrl`, through a bare bucket (a whole
 * state store would follow every bucket, and so process each of the sidecar's writes in the
 * measuring client): probed once now, then on, as the operator does, since a state last probed
 * over 5 minutes ago is stale and a run with every variant lasts longer than that.
 */
export async function publishBenchGpu(
  natsUrl: string,
  emulatorUrl: string,
): Promise<{ stop(): Promise<void> }> {
  const kv = await connectNatsKv({ servers: natsUrl });
  const bucket = await kv.bucket(PROVIDER_STATE_BUCKET, bucketSettings(1)[PROVIDER_STATE_BUCKET]!);
  const publisher = new ProviderPublisher({ sink: new ProviderStateWriter(bucket), intervalMs: 60_000 });
  await publisher.setProviders([
    { name: "bench-gpu", endpoint: emulatorUrl, totalVramMiB: 81920, maxParallel: 64 },
  ]);
  await publisher.probeNow();
  publisher.start();
  return {
    async stop() {
      await publisher.stop();
      await kv.close();
    },
  };
}

export async function startVariant(o: VariantOptions): Promise<Variant> {
  const nats = await NatsServer.start();
  const published = await publishBenchGpu(nats.url, o.emulatorUrl);
  const sidecar = await startSidecarProcess(
    ["--nats", nats.url, "--agent", "bench/agent", "--proxy-listen", ""],
    o.env ?? {},
    {
      ...(o.bin ? { bin: o.bin } : {}),
      nodeArgs: childNodeArgs(),
    },
  );
  const client = schedulerClient(sidecar.apiAddress);
  return {
    name: o.name,
    noConversation: o.noConversation ?? false,
    sidecar,
    client,
    natsPid: nats.pid,
    async close() {
      client.close();
      await sidecar.stop();
      await published.stop();
      await nats.dispose();
    },
  };
}
