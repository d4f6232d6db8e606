// How a task's answer goes out (docs/rules/engines.md "A real llama.cpp engine"): whole, as one
// JSON body, or streamed as server-sent events, one per piece of text, then the route's final
// events (and `data: [DONE]` on the OpenAI routes; llama-server's /completion sends none). The
// stream opens with the first piece, so anything refused before generation (context, queue,
// slot) is an ordinary HTTP error; an error after that is an `error` event, then the end.
import type { Token } from "node-llama-cpp";
import { sendJson } from "../net/index.js";
import type { GenerationOutput } from "./generation.js";
import { type EngineRequest, SseStream } from "./http.js";
import type { EngineModel } from "./model-set.js";
import type { GenerationParams } from "./request-params.js";
import { runTask } from "./task.js";
import { errorAnswer } from "./wire.js";

export type TaskOutput = GenerationOutput & { idSlot: number };

export interface AnswerShape {
  /** The first event of a stream, before any text (OpenAI chat: the assistant's role). */
  head?(): unknown;
  /** The event that carries one piece of text. */
  piece(text: string, tokens: readonly Token[]): unknown;
  /** The last events of a stream. */
  tail(out: TaskOutput): unknown[];
  /** The answer when not streamed. */
  whole(out: TaskOutput): unknown;
  /** Whether the stream ends with `data: [DONE]`. */
  done: boolean;
}

export async function answerTask(
  r: EngineRequest,
  m: EngineModel,
  prompt: Token[],
  params: GenerationParams,
  shape: AnswerShape,
): Promise<void> {
  if (!params.stream) {
    const out = await runTask(r, m, prompt, params, () => undefined);
    sendJson(r.res, 200, shape.whole(out));
    return;
  }
  const sse = new SseStream(r.res);
  const open = async () => {
    if (sse.opened) return;
    sse.open();
    if (shape.head) await sse.event(shape.head());
  };
  try {
    const out = await runTask(r, m, prompt, params, async (text, tokens) => {
      await open();
      await sse.event(shape.piece(text, tokens));
    });
    await open();
    for (const e of shape.tail(out)) await sse.event(e);
    if (shape.done) await sse.event("[DONE]");
    sse.end();
  } catch (err) {
    if (!sse.opened) throw err;
    await sse.event(errorAnswer(err).body);
    sse.end();
  }
}
