import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors/index.js";
import type { ForwardInput } from "./call-context.js";
import { statusError } from "./upstream-errors.js";

const input = { api: "openai-chat", provider: "llama-1", model: "tiny" } as unknown as ForwardInput;
const llama = (status: number, message: string, type = "server_error") =>
  JSON.stringify({ error: { code: status, message, type } });

describe("statusError", () => {
  it("reads llama.cpp's 500 for tools without --jinja as the caller's request, not a provider failure", () => {
    for (const message of ["tools param requires --jinja flag", "tool_choice param requires --jinja flag"]) {
      const { error, providerFault } = statusError(input, 500, llama(500, message));
      expect(providerFault).toBe(false);
      expect(error.code).toBe(ErrorCode.InvalidArgument);
      expect(error.message).toBe(`the provider rejected the request: ${message}`);
    }
  });

  it("any other 500 is the provider's failure", () => {
    const { error, providerFault } = statusError(input, 500, llama(500, "out of memory"));
    expect(providerFault).toBe(true);
    expect(error.code).toBe(ErrorCode.ProviderFailure);
  });
});
