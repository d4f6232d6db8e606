// From manifests to an injected pod: the examples' prod bundle and crew go through the real
// binder, the webhook looks the agents up in that result (as the operator does with its last
// reconcile), and the injected sidecar carries exactly the env the binder computed.
import { join } from "node:path";
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { bind } from "../../src/binding/index.js";
import { loadManifests, toSnapshot } from "../../src/operator/manifests/index.js";
import {
  DEFAULT_INJECTION_OPTIONS,
  lookupFromAgents,
  type PodLike,
  reviewAdmission,
} from "../../src/operator/webhook/index.js";

const EXAMPLES = join(import.meta.dirname, "..", "..", "examples");

describe("webhook over the binder's result", async () => {
  const set = await loadManifests([join(EXAMPLES, "prod"), join(EXAMPLES, "crew")]);
  const result = bind(toSnapshot(set), { now: new Date("2026-06-11T00:00:00Z") });
  let current = result.agents;
  const lookup = lookupFromAgents(() => current);

  it.each(result.agents.map((a) => [a.key, a] as const))(
    "%s: the sidecar gets its binding's env",
    (_key, agent) => {
      const pod: PodLike = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          generateName: `${agent.name}-`,
          labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": agent.name },
        },
        spec: { containers: [{ name: "agent", image: "agent:1" }] },
      };
      const out = reviewAdmission(
        {
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          request: {
            uid: "u-1",
            kind: { group: "", version: "v1", kind: "Pod" },
            namespace: agent.namespace,
            object: pod,
          },
        },
        lookup,
        DEFAULT_INJECTION_OPTIONS,
      );
      expect(out.result?.injected).toBe(true);
      const ops = JSON.parse(Buffer.from(out.review.response.patch!, "base64").toString("utf8"));
      const after = jsonpatch.applyPatch(structuredClone(pod), ops, true, false).newDocument as {
        spec: { initContainers: { env: { name: string; value: string }[] }[] };
      };
      const env = Object.fromEntries(after.spec.initContainers[0]!.env.map((e) => [e.name, e.value]));
      expect(Object.keys(agent.env).length).toBeGreaterThan(0);
      for (const [k, v] of Object.entries(agent.env)) expect(env[k], k).toBe(v);
      expect(env.KUBEMOOT_AGENT_NAME).toBe(agent.name);
    },
  );

  it("follows the latest result: an agent dropped from it is no longer injected", () => {
    const first = result.agents[0]!;
    expect(lookup(first.namespace, first.name)).toBeDefined();
    current = result.agents.slice(1);
    expect(lookup(first.namespace, first.name)).toBeUndefined();
    current = result.agents;
  });
});
