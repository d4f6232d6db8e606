import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { endpointHostPort, parseEndpointAllowlist } from "./endpoint-allowlist.js";

const F = "KUBEMOOT_PROVIDER_ENDPOINTS";
const allows = (list: string, endpoint: string) => parseEndpointAllowlist(list, F).allows(endpoint);

describe("endpointHostPort", () => {
  it("takes the port from the scheme when the URL names none, lowercases, drops brackets and a trailing dot", () => {
    expect(endpointHostPort("http://Ollama.GPU.svc./x")).toEqual({ host: "ollama.gpu.svc", port: 80 });
    expect(endpointHostPort("https://gpu-1:8443")).toEqual({ host: "gpu-1", port: 8443 });
    expect(endpointHostPort("https://gpu-1")).toEqual({ host: "gpu-1", port: 443 });
    expect(endpointHostPort("http://[FD00::0:1]:11434")).toEqual({ host: "fd00::1", port: 11434 });
    // userinfo is not the host
    expect(endpointHostPort("http://gpu-1.example@evil.test:1/")).toEqual({ host: "evil.test", port: 1 });
  });

  it("is undefined for what is not an http(s) URL", () => {
    expect(endpointHostPort("gpu-1:11434")).toBeUndefined();
    expect(endpointHostPort("file:///etc/passwd")).toBeUndefined();
    expect(endpointHostPort("")).toBeUndefined();
  });
});

describe("parseEndpointAllowlist", () => {
  it("allows everything when empty (blank items ignored)", () => {
    expect(parseEndpointAllowlist("", F).patterns).toEqual([]);
    expect(parseEndpointAllowlist(" , ", F).patterns).toEqual([]);
    expect(allows("", "http://anything:1")).toBe(true);
  });

  it("matches host names exactly and case-insensitively; port optional = any", () => {
    expect(allows("gpu-1.gpu.svc", "http://GPU-1.gpu.svc:11434")).toBe(true);
    expect(allows("GPU-1.gpu.svc", "http://gpu-1.gpu.svc:80")).toBe(true);
    expect(allows("gpu-1.gpu.svc", "http://gpu-2.gpu.svc:11434")).toBe(false);
    expect(allows("gpu-1.gpu.svc", "http://gpu-1.gpu.svc.evil.test:11434")).toBe(false);
    expect(allows("gpu-1.gpu.svc", "http://x.gpu-1.gpu.svc:11434")).toBe(false);
  });

  it("compares ports, the default one from the scheme", () => {
    expect(allows("gpu-1:11434", "http://gpu-1:11434")).toBe(true);
    expect(allows("gpu-1:11434", "http://gpu-1:11435")).toBe(false);
    expect(allows("gpu-1:80", "http://gpu-1/")).toBe(true);
    expect(allows("gpu-1:80", "https://gpu-1/")).toBe(false);
    expect(allows("gpu-1:443", "https://gpu-1/")).toBe(true);
  });

  it("a leading *. spans one or more labels; * inside a label stays within it", () => {
    const list = "*.gpu.svc.cluster.local:11434";
    expect(allows(list, "http://ollama-0.ollama.gpu.svc.cluster.local:11434")).toBe(true);
    expect(allows(list, "http://a.gpu.svc.cluster.local:11434")).toBe(true);
    expect(allows(list, "http://gpu.svc.cluster.local:11434")).toBe(false);
    expect(allows(list, "http://a.gpu.svc.cluster.local:11435")).toBe(false);
    expect(allows(list, "http://a.gpu.svc.cluster.local.evil.test:11434")).toBe(false);
    expect(allows("ollama-*", "http://ollama-3:1")).toBe(true);
    expect(allows("ollama-*", "http://ollama-3.evil.test:1")).toBe(false);
    expect(allows("a.*.svc", "http://a.b.svc")).toBe(true);
    expect(allows("a.*.svc", "http://a.b.c.svc")).toBe(false);
    expect(allows("*:11434", "http://anything.test:11434")).toBe(true);
    expect(allows("*:11434", "http://10.1.2.3:11434")).toBe(true);
    expect(allows("*:11434", "http://anything.test:80")).toBe(false);
  });

  it("a name pattern never matches an IP-literal host", () => {
    expect(allows("*.svc", "http://10.0.0.1:80")).toBe(false);
  });

  it("matches IPv4 and IPv6 literals, normalised as URLs normalise them", () => {
    expect(allows("10.0.0.5:11434", "http://10.0.0.5:11434")).toBe(true);
    expect(allows("10.0.0.5", "http://0x0a.0.0.5:9")).toBe(true);
    expect(allows("10.0.0.5", "http://10.0.0.6")).toBe(false);
    expect(allows("[fd00:0:0::1]:11434", "http://[fd00::1]:11434")).toBe(true);
    expect(allows("fd00::1", "http://[fd00::1]:1")).toBe(true);
    expect(allows("[fd00::1]:11434", "http://[fd00::2]:11434")).toBe(false);
  });

  it("matches CIDRs, v4 and v6, only for IP-literal hosts (no DNS)", () => {
    expect(allows("10.0.0.0/8", "http://10.200.3.4:11434")).toBe(true);
    expect(allows("10.0.0.0/8", "http://11.0.0.1:11434")).toBe(false);
    expect(allows("10.0.0.0/8", "http://localhost:11434")).toBe(false);
    expect(allows("192.168.1.0/24", "http://192.168.1.255")).toBe(true);
    expect(allows("192.168.1.0/24", "http://192.168.2.1")).toBe(false);
    expect(allows("fd00::/8", "http://[fd12:3456::1]:11434")).toBe(true);
    expect(allows("[fd00::]/8", "http://[fe80::1]:11434")).toBe(false);
    expect(allows("0.0.0.0/0", "http://1.2.3.4")).toBe(true);
  });

  it("allows when any entry matches; refuses what is not an http(s) URL", () => {
    const list = "10.0.0.0/8, gpu-1:11434 ,*.gpu.svc";
    expect(allows(list, "http://gpu-1:11434")).toBe(true);
    expect(allows(list, "http://x.gpu.svc:5")).toBe(true);
    expect(allows(list, "http://10.9.9.9:5")).toBe(true);
    expect(allows(list, "http://127.0.0.1:11434")).toBe(false);
    expect(allows(list, "gpu-1:11434")).toBe(false);
    expect(allows(list, "ftp://gpu-1:11434")).toBe(false);
  });

  it.each([
    ["http://gpu-1:11434", "not a URL"],
    ["gpu-1:0", "port must be 1-65535"],
    ["gpu-1:70000", "port must be 1-65535"],
    ["gpu-1:x", "port must be 1-65535"],
    ["gpu-1:", "port must be 1-65535"],
    ["fd00::1:11434:1:1:1:1:1:1", "IPv6 address with a port goes in brackets"],
    ["a:b:c", "IPv6 address with a port goes in brackets"],
    ["[gpu-1]:80", "brackets hold an IPv6 address"],
    ["10.0.0.0/33", "prefix length must be 0-32"],
    ["fd00::/129", "prefix length must be 0-128"],
    ["gpu/8", "a CIDR needs an IP address"],
    ["10.0.0.0/x", "prefix length"],
    ["10.0.*.*", "use a CIDR"],
    ["gpu..svc", "expected a host name"],
    ["gpu_1$.svc", "expected a host name"],
    ["-gpu", "expected a host name"],
    ["user@gpu-1", "not a URL"],
  ])("refuses %j as InvalidConfig naming the variable and the entry (%s)", (entry, why) => {
    let err: unknown;
    try {
      parseEndpointAllowlist(`gpu-ok:1,${entry}`, F);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KubemootError);
    expect((err as KubemootError).code).toBe(ErrorCode.InvalidConfig);
    expect((err as KubemootError).message).toContain(`${F}: entry ${JSON.stringify(entry)}: `);
    expect((err as KubemootError).message).toContain(why);
  });

  it("quotes at most 200 characters of a bad entry, control characters escaped", () => {
    let msg = "";
    try {
      parseEndpointAllowlist(`\u0007${"x".repeat(500)}:99999`, F);
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toContain("\\u0007");
    expect(msg.length).toBeLessThan(300);
  });
});
