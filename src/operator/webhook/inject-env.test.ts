// The injected sidecar's env is a protocol between the webhook (writer) and the sidecar
// (reader): every KUBEMOOT_* variable it gets is one the registry says the webhook or the
// operator writes and the sidecar reads, each of those is written, and each reads back.
import { describe, expect, it } from "vitest";
import { agentEnv, type PhaseBinding } from "../../binding/index.js";
import { ALL_SETTINGS, SETTINGS } from "../../settings/index.js";
import { sidecarContainer } from "./inject.js";
import { DEFAULT_INJECTION_OPTIONS } from "./options.js";
import { withProviderEndpoints } from "./provider-endpoints.js";

const phase = (model: string) =>
  ({ model, endpoint: `http://${model.replace(":", "-")}:11434` }) as PhaseBinding;

function injectedEnv(): Record<string, string> {
  const lookup = withProviderEndpoints(
    () => ({
      namespace: "crew-a",
      name: "analyst",
      env: agentEnv(
        { mulling: phase("qwen3:14b"), triage: phase("qwen3:8b") },
        { mulling: [{ model: "qwen3:14b", score: 60 }], triage: [] },
        { weight: 2, priority: "interactive", maxPriority: "interactive" },
      ),
    }),
    () => ["http://ollama-a.kubemoot.svc:11434"],
  );
  const container = sidecarContainer(
    { namespace: "crew-a", name: "analyst", crew: "crew-a/pilot" },
    lookup("crew-a", "analyst")!.env,
    {
      ...DEFAULT_INJECTION_OPTIONS,
      natsUrl: "nats://nats.kubemoot:4222",
      natsSecret: {
        name: "kubemoot-nats",
        credsKey: "nats.nk",
        caKey: "ca.crt",
        certKey: "tls.crt",
        keyKey: "tls.key",
      },
    },
  ) as { env: { name: string; value: string }[] };
  return Object.fromEntries(
    container.env.filter((e) => e.name.startsWith("KUBEMOOT_")).map((e) => [e.name, e.value]),
  );
}

describe("the injected sidecar's env", () => {
  it("is exactly the variables the registry says the webhook and the operator write", () => {
    const written = ALL_SETTINGS.filter((s) => s.writtenBy.length > 0).map((s) => s.name);
    expect(Object.keys(injectedEnv()).sort()).toEqual(written.sort());
  });

  it("reads back through the sidecar's parsers", () => {
    const env = injectedEnv();
    for (const s of ALL_SETTINGS.filter((x) => x.name in env)) {
      expect(s.readBy, s.name).toContain("sidecar");
      expect(() => s.parse(env[s.name]), s.name).not.toThrow();
    }
    expect(SETTINGS.state.parse(env[SETTINGS.state.name])).toBe("nats");
    expect(SETTINGS.providerEndpoints.parse(env[SETTINGS.providerEndpoints.name])).toBe(
      "ollama-a.kubemoot.svc:11434",
    );
  });
});
