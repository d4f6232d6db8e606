import { expect, it } from "vitest";
import { EngineError } from "./errors.js";

it("an engine error's message never carries the endpoint's credentials; the endpoint field keeps the URL", () => {
  const e = new EngineError("refused", "connection refused", {
    endpoint: "http://ops:hunter2@gpu-a:11434",
    operation: "GET /api/ps",
  });
  expect(e.message).toBe("GET /api/ps http://***@gpu-a:11434: connection refused");
  expect(e.endpoint).toBe("http://ops:hunter2@gpu-a:11434");
});
