// What `npm start` traces (docs/tracing.md "Configuration": `demo` honours the OTEL_* variables
// like every long-running command): the demo as a real process, OTEL_EXPORTER_OTLP_ENDPOINT
// pointed at a local OTLP/HTTP receiver (test/helpers/otlp-receiver.ts), run briefly and fast.
// Asserted once it has exited (its spans flushed at exit): the crew's proxied calls are SERVER
// spans with the GenAI attributes ("The proxied call"), each with its `kubemoot.place` child
// ("The placement span"), those answered with the engine's token counts and the copy they ran
// on; and no span carries the crew's prompt text
// (src/demo/traffic.ts: a system prompt "You are <agent>, a <role>." and a user message of words
// from a fixed list).
import { afterAll, beforeAll, expect, it } from "vitest";
import { OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { type CliProcess, startCliProcess } from "../helpers/sidecar-process.js";

const SERVER = 2;
/** The demo's user messages are these words (src/demo/traffic.ts WORDS), 60 or more of them. */
const WORDS = "cluster pod latency node error budget rollout alert metric trace deploy capacity queue".split(
  " ",
);
/** Two of those words in a row: a fragment of a prompt, which no attribute should hold. */
const PROMPT_FRAGMENT = new RegExp(`\\b(${WORDS.join("|")}) (${WORDS.join("|")})\\b`);

let receiver: OtlpReceiver;
let demo: CliProcess | undefined;
let code: number | null;
let spans: ReceivedSpan[];

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  demo = await startCliProcess(
    ["demo", "--duration", "5", "--speed", "40", "--seed", "7", "--web-listen", ""],
    /kubemoot-scheduler demo: API on/,
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" },
    15_000,
  );
  code = await demo.exited;
  spans = receiver.spans;
}, 30_000);

afterAll(async () => {
  await demo?.stop("SIGKILL");
  await receiver?.close();
});

it("the demo exports its proxied calls' spans with GenAI attributes, and a placement span under each", () => {
  expect(code, demo?.output()).toBe(0);
  expect(receiver.rejected).toBe(0);
  const calls = spans.filter((s) => s.kind === SERVER && s.name.startsWith("chat "));
  expect(calls.length, `span names: ${[...new Set(spans.map((s) => s.name))].join(", ")}`).toBeGreaterThan(0);
  /** Each call's placement: its one child of that name, in its trace. */
  const placeOf = (call: ReceivedSpan): ReceivedSpan => {
    const found = spans.filter((s) => s.name === "kubemoot.place" && s.parentSpanId === call.spanId);
    expect(found, call.name).toHaveLength(1);
    expect(found[0]!.traceId).toBe(call.traceId);
    return found[0]!;
  };
  // Every call, even one the demo's stop cut off while it waited or streamed, asked for a GPU.
  for (const call of calls) {
    expect(call.service).toBe("kubemoot-demo");
    expect(call.name).toBe(`chat ${call.attributes["gen_ai.request.model"]}`);
    expect(call.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.request.stream": true });
    // The demo's cards are Ollama; a call the stop cut off before it was placed reached none.
    expect(call.attributes["gen_ai.provider.name"]).toBe(
      call.attributes["gen_ai.response.model"] !== undefined ? "ollama" : "_OTHER",
    );
    placeOf(call);
  }
  // The calls that ran to their end: the engine's token counts, and the copy they ran on.
  const answered = calls.filter((c) => c.attributes["gen_ai.response.finish_reasons"] !== undefined);
  expect(answered.length).toBeGreaterThan(0);
  for (const call of answered) {
    expect(call.attributes["gen_ai.usage.input_tokens"], call.name).toBeGreaterThan(0);
    expect(call.attributes["gen_ai.usage.output_tokens"], call.name).toBeGreaterThan(0);
    const place = placeOf(call);
    expect(place.attributes).toMatchObject({
      "kubemoot.place.provider": call.attributes["kubemoot.place.provider"],
      "kubemoot.place.model": call.attributes["gen_ai.response.model"],
      "kubemoot.place.ticket_id": call.attributes["kubemoot.place.ticket_id"],
    });
    expect(["ollama-a", "ollama-b"]).toContain(place.attributes["kubemoot.place.provider"]);
  }
  // The crew loaded at least one model cold: its placement says so.
  expect(spans.some((s) => s.name === "kubemoot.place" && s.attributes["kubemoot.place.cold"] === true)).toBe(
    true,
  );
});

it("no span of the demo holds the crew's prompt text", () => {
  expect(spans.length).toBeGreaterThan(0);
  const text = JSON.stringify(spans);
  expect(text).not.toContain("You are ");
  expect(text).not.toMatch(PROMPT_FRAGMENT);
});
