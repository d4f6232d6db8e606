// docs/deploy.md's no-webhook example must be the container the webhook injects: the same
// image, args, probes, ports, security context and resources (with the documented identity env).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DEFAULT_INJECTION_OPTIONS, ollamaHost, sidecarContainer } from "../../src/operator/webhook/index.js";

const DOC = readFileSync(join(import.meta.dirname, "..", "..", "docs", "deploy.md"), "utf8");

function exampleBlock(): { spec: { template: { spec: Record<string, unknown> } } } {
  const at = DOC.indexOf("<!-- sidecar-container");
  expect(at, "docs/deploy.md has the marked example").toBeGreaterThan(0);
  const match = /```yaml\n([\s\S]*?)```/.exec(DOC.slice(at));
  expect(match).not.toBeNull();
  return parse(match![1]!);
}

describe("docs/deploy.md: the no-webhook alternative", () => {
  const pod = exampleBlock().spec.template.spec as {
    initContainers: Record<string, unknown>[];
    containers: { env: { name: string; value: string }[] }[];
  };
  const doc = pod.initContainers[0]!;
  const env = doc.env as { name: string; value: string }[];
  const value = (n: string) => env.find((e) => e.name === n)?.value ?? "";
  const code = sidecarContainer(
    {
      namespace: value("KUBEMOOT_NAMESPACE"),
      name: value("KUBEMOOT_AGENT_NAME"),
      crew: value("KUBEMOOT_CREW"),
    },
    {},
    { ...DEFAULT_INJECTION_OPTIONS, natsUrl: value("KUBEMOOT_NATS_URL") },
  );

  it("documents exactly the container the webhook injects", () => {
    expect(doc).toEqual(code);
  });

  it("points the agent's OLLAMA_HOST at the sidecar's proxy", () => {
    expect(pod.containers[0]!.env).toContainEqual({
      name: "OLLAMA_HOST",
      value: ollamaHost(DEFAULT_INJECTION_OPTIONS),
    });
  });
});
