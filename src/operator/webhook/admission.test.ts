import { describe, expect, it } from "vitest";
import { lookupFromAgents, reviewAdmission } from "./admission.js";
import type { AgentInjectionBinding } from "./inject.js";
import { DEFAULT_INJECTION_OPTIONS } from "./options.js";

const BOUND: AgentInjectionBinding = {
  namespace: "crew-a",
  name: "analyst",
  env: { KUBEMOOT_MODEL_MODEL: "m" },
};
const lookup = lookupFromAgents(() => [BOUND]);

function review(request: Record<string, unknown>) {
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: "u-1", ...request } };
}

const pod = (namespace?: string) => ({
  metadata: {
    ...(namespace ? { namespace } : {}),
    labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "analyst" },
  },
  spec: { containers: [{ name: "agent", image: "a:1" }] },
});

describe("reviewAdmission", () => {
  it("allows anything that is not a core/v1 Pod without a patch", () => {
    for (const kind of [
      { group: "apps", version: "v1", kind: "Deployment" },
      { group: "example.com", version: "v1", kind: "Pod" },
    ]) {
      const out = reviewAdmission(
        review({ kind, namespace: "crew-a", object: pod() }),
        lookup,
        DEFAULT_INJECTION_OPTIONS,
      );
      expect(out.review.response).toEqual({ uid: "u-1", allowed: true });
      expect(out.result).toBeUndefined();
    }
  });

  it("takes the namespace from the request, falling back to the pod's metadata", () => {
    const kind = { group: "", version: "v1", kind: "Pod" };
    const fromRequest = reviewAdmission(
      review({ kind, namespace: "crew-a", object: pod() }),
      lookup,
      DEFAULT_INJECTION_OPTIONS,
    );
    const fromPod = reviewAdmission(
      review({ kind, object: pod("crew-a") }),
      lookup,
      DEFAULT_INJECTION_OPTIONS,
    );
    const elsewhere = reviewAdmission(
      review({ kind, namespace: "crew-b", object: pod() }),
      lookup,
      DEFAULT_INJECTION_OPTIONS,
    );
    expect(fromRequest.result?.injected).toBe(true);
    expect(fromPod.result?.injected).toBe(true);
    expect(elsewhere.result?.injected).toBe(false);
    expect(elsewhere.review.response.warnings?.[0]).toContain("crew-b/analyst");
  });

  it.each([
    [
      { kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1beta1", request: { uid: "u" } },
      "apiVersion",
    ],
    [{ kind: "Pod", apiVersion: "v1" }, "kind"],
    [{ kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1", request: { uid: "" } }, "request.uid"],
    [null, "kind"],
  ])("rejects %j naming %s", (body, field) => {
    expect(() => reviewAdmission(body, lookup, DEFAULT_INJECTION_OPTIONS)).toThrow(field);
  });
});

describe("lookupFromAgents", () => {
  it("answers from the current list and rebuilds only when the list changes", () => {
    let list: AgentInjectionBinding[] | undefined;
    let calls = 0;
    const l = lookupFromAgents(() => {
      calls++;
      return list;
    });
    expect(l("crew-a", "analyst")).toBeUndefined();
    list = [BOUND];
    expect(l("crew-a", "analyst")).toBe(BOUND);
    expect(l("crew-a", "other")).toBeUndefined();
    list = [];
    expect(l("crew-a", "analyst")).toBeUndefined();
    expect(calls).toBe(4);
  });
});
