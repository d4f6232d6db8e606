import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { parseHostPort } from "./host-port.js";

describe("parseHostPort", () => {
  it("reads HOST:PORT, a bracketed IPv6 host without its brackets", () => {
    expect(parseHostPort("--listen", "127.0.0.1:50051")).toEqual({ host: "127.0.0.1", port: 50051 });
    expect(parseHostPort("--listen", "[::1]:0")).toEqual({ host: "::1", port: 0 });
  });

  it.each(["127.0.0.1", ":8080", "host:70000", "host:port", "::1:80"])(
    "refuses %j as InvalidConfig naming the flag",
    (value) => {
      let err: unknown;
      try {
        parseHostPort("--proxy-listen", value);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KubemootError);
      expect((err as KubemootError).code).toBe(ErrorCode.InvalidConfig);
      expect((err as KubemootError).message).toBe(`--proxy-listen: expected HOST:PORT, got "${value}"`);
    },
  );
});
