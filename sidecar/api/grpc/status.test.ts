import { describe, expect, it } from "vitest";
import { encodeGrpcMessage, GrpcCode, parseGrpcTimeout } from "./status.js";

describe("grpc-message", () => {
  it("passes printable ASCII through and percent-encodes the rest as UTF-8", () => {
    expect(encodeGrpcMessage("prompt_tokens: must be ≥ 0")).toBe("prompt_tokens: must be %E2%89%A5 0");
    expect(encodeGrpcMessage("100% busy\n")).toBe("100%25 busy%0A");
    expect(encodeGrpcMessage("plain text")).toBe("plain text");
    expect(decodeURIComponent(encodeGrpcMessage("naïve ✓ 100%"))).toBe("naïve ✓ 100%");
  });
});

describe("grpc-timeout", () => {
  it("reads every unit", () => {
    expect(parseGrpcTimeout("2H")).toBe(7_200_000);
    expect(parseGrpcTimeout("3M")).toBe(180_000);
    expect(parseGrpcTimeout("4S")).toBe(4000);
    expect(parseGrpcTimeout("250m")).toBe(250);
    expect(parseGrpcTimeout("1500u")).toBeCloseTo(1.5);
    expect(parseGrpcTimeout("2000000n")).toBeCloseTo(2);
    expect(parseGrpcTimeout(undefined)).toBeUndefined();
  });

  it("refuses a malformed value instead of treating it as no deadline", () => {
    for (const bad of ["", "10", "1s", "123456789S", "-1S", "1.5S"]) {
      expect(() => parseGrpcTimeout(bad), bad).toThrow(
        expect.objectContaining({ code: GrpcCode.INVALID_ARGUMENT }),
      );
    }
  });
});
