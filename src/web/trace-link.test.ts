// A call's trace link (docs/web-view.md "A call's story"): KUBEMOOT_WEB_TRACE_URL (--web-trace-url)
// is taken only as an http(s) URL with {traceId} in it, else an InvalidConfig naming the variable
// or the flag; the link is the template with the 32-hex trace id in every slot, and nothing else
// ever enters it.
import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { SETTINGS } from "../settings/index.js";
import { traceLink } from "./trace-link.js";

const ID = "0af7651916cd43dd8448eb211c80319c";
const JAEGER = "https://jaeger.example/trace/{traceId}";
const GRAFANA =
  'https://grafana.example/explore?left={"queries":[{"datasource":"tempo","query":"{traceId}"}]}&x={traceId}';

function refusal(raw: string, source?: string): KubemootError {
  try {
    SETTINGS.webTraceUrl.parse(raw, source);
  } catch (err) {
    expect(KubemootError.is(err, ErrorCode.InvalidConfig)).toBe(true);
    return err as KubemootError;
  }
  throw new Error(`"${raw}" was taken`);
}

describe("KUBEMOOT_WEB_TRACE_URL", () => {
  it("takes an http(s) URL with {traceId}, trimmed; blank or unset is none", () => {
    expect(SETTINGS.webTraceUrl.parse(undefined)).toBe("");
    expect(SETTINGS.webTraceUrl.parse("  ")).toBe("");
    expect(SETTINGS.webTraceUrl.parse(` ${JAEGER}\n`)).toBe(JAEGER);
    expect(SETTINGS.webTraceUrl.parse("http://127.0.0.1:16686/trace/{traceId}")).toBe(
      "http://127.0.0.1:16686/trace/{traceId}",
    );
    expect(SETTINGS.webTraceUrl.parse(GRAFANA)).toBe(GRAFANA);
  });

  it.each([
    ["no slot", "https://jaeger.example/trace/", "expected a URL with {traceId} where the trace id goes"],
    ["a misspelt slot", "https://jaeger.example/trace/{traceid}", "expected a URL with {traceId}"],
    ["javascript:", "javascript:alert('{traceId}')", "expected an http:// or https:// URL"],
    ["ftp:", "ftp://traces.example/{traceId}", "expected an http:// or https:// URL"],
    ["no scheme", "jaeger.example/trace/{traceId}", "expected an http:// or https:// URL"],
    ["no URL", "https://[nope/{traceId}", "expected an http:// or https:// URL"],
    ["a long one", `https://jaeger.example/{traceId}/${"x".repeat(2048)}`, "over 2048 characters"],
  ])("refuses %s, naming the variable", (_what, raw, message) => {
    const err = refusal(raw);
    expect(err.message).toContain(`KUBEMOOT_WEB_TRACE_URL: ${message}`);
    expect(err.field).toBe("KUBEMOOT_WEB_TRACE_URL");
  });

  it("names the flag when the value came from it", () => {
    expect(refusal("https://jaeger.example/", "--web-trace-url").message).toMatch(/^--web-trace-url: /);
  });
});

describe("traceLink", () => {
  it("puts the trace id into every slot of the template", () => {
    expect(traceLink(JAEGER, ID)).toBe(`https://jaeger.example/trace/${ID}`);
    expect(traceLink(GRAFANA, ID)).toBe(GRAFANA.replaceAll("{traceId}", ID));
    expect(traceLink("HTTP://x.example/t?id={traceId}", ID)).toBe(`HTTP://x.example/t?id=${ID}`);
  });

  it("links only a 32-hex trace id, into an http(s) template with a slot", () => {
    for (const bad of ["", ID.toUpperCase(), `${ID}0`, ID.slice(1), "x".repeat(32), `${ID.slice(2)}/..`]) {
      expect(traceLink(JAEGER, bad), bad).toBeUndefined();
    }
    expect(traceLink(`"><script>{traceId}`, ID)).toBeUndefined();
    for (const template of [undefined, "", "https://jaeger.example/", "javascript:{traceId}"]) {
      expect(traceLink(template, ID), String(template)).toBeUndefined();
    }
  });
});
