import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { hostAllowed, parseAllowedHosts } from "./allowed-hosts.js";

describe("parseAllowedHosts", () => {
  it("reads comma-separated hosts, wildcards and ports, lowercased; empty means none", () => {
    expect(parseAllowedHosts(" Inventory.example.com, *.corp.example:8443 ,", "f")).toEqual([
      "inventory.example.com",
      "*.corp.example:8443",
    ]);
    expect(parseAllowedHosts("", "f")).toEqual([]);
  });

  it.each(["https://a.example", "a.*.example", "*", "a.example:0", "a.example:70000", "a b"])(
    "refuses %j naming the field",
    (bad) => {
      let err: unknown;
      try {
        parseAllowedHosts(bad, "KUBEMOOT_TOPOLOGY_ALLOWED_HOSTS");
      } catch (e) {
        err = e;
      }
      expect(KubemootError.is(err, ErrorCode.InvalidArgument)).toBe(true);
      expect((err as KubemootError).field).toBe("KUBEMOOT_TOPOLOGY_ALLOWED_HOSTS");
    },
  );
});

describe("hostAllowed", () => {
  const allow = ["inventory.example.com", "*.corp.example", "pinned.example:8443"];
  it.each([
    ["https://inventory.example.com/topology", true],
    ["https://INVENTORY.example.com:9443/x", true],
    ["https://inventory.example.com.evil.test/x", false],
    ["https://evilinventory.example.com/x", false],
    ["https://a.corp.example/x", true],
    ["https://a.b.corp.example/x", true],
    ["https://corp.example/x", false],
    ["https://xcorp.example/x", false],
    ["https://pinned.example:8443/x", true],
    ["https://pinned.example/x", false],
    ["https://10.0.0.1/x", false],
  ])("%s → %s", (url, ok) => {
    expect(hostAllowed(url, allow)).toBe(ok);
  });
});
