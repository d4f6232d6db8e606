// A non-streamed answer: read whole (up to a bound, so that a failure can still be a clean 502),
// its counts noted, translated back when the call was translated, and sent with its length.
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import { readAnswer } from "./answer-tail.js";
import type { AnswerReader, DeadlineState, ForwardInput, ForwardOutcome } from "./call-context.js";
import { ollamaReport, openaiReport } from "./framing.js";
import { describe } from "./upstream-errors.js";
import { EMBED_APIS, OPENAI_APIS } from "./validate.js";

/** Non-streamed answers are buffered up to this (bytes). */
const MAX_BUFFERED_ANSWER = 64 * 1024 * 1024;

/** The reading of the body failed: the client left, the deadline passed or the provider broke off. */
function readFailure(
  i: ForwardInput,
  err: unknown,
  deadline: DeadlineState,
  ttfbMs: number,
  latencyMs: number,
): ForwardOutcome {
  if (i.clientGone()) return { kind: "client-gone", answered: true, ttfbMs, latencyMs };
  const timedOut = deadline.aborted;
  const detail = { provider: i.provider };
  const error = timedOut
    ? new KubemootError(ErrorCode.Timeout, `provider ${i.provider} did not finish within ${i.timeoutMs} ms`, {
        detail,
      })
    : new KubemootError(
        ErrorCode.ProviderFailure,
        `provider ${i.provider} broke off the answer: ${describe(err)}`,
        { detail },
      );
  return { kind: "failed", error, providerFault: !i.signal.aborted || timedOut, latencyMs };
}

function providerFailure(message: string, latencyMs: number, detail?: { provider: string }): ForwardOutcome {
  const error = new KubemootError(ErrorCode.ProviderFailure, message, detail ? { detail } : {});
  return { kind: "failed", error, providerFault: true, latencyMs };
}

export const bufferedAnswer: AnswerReader = async (i, { statusCode, headers, body }, started, deadline) => {
  const since = () => performance.now() - started;
  let buf: Buffer;
  let ttfbMs = 0;
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (ttfbMs === 0) ttfbMs = since();
      size += chunk.length;
      if (size > MAX_BUFFERED_ANSWER) {
        body.destroy();
        return providerFailure(
          `provider ${i.provider} sent an answer over ${MAX_BUFFERED_ANSWER} bytes`,
          since(),
        );
      }
      chunks.push(chunk);
    }
    buf = Buffer.concat(chunks, size);
  } catch (err) {
    body.destroy();
    return readFailure(i, err, deadline, ttfbMs, since());
  }
  // A translated answer is rebuilt from its vectors, so only one passed on as is skips them.
  const obj = readAnswer(buf, EMBED_APIS.has(i.api) && i.translation === undefined);
  if (!obj) {
    const message = `provider ${i.provider} answered something that is not JSON`;
    return providerFailure(message, since(), { provider: i.provider });
  }
  const openai = OPENAI_APIS.has(i.translation?.target ?? i.api);
  const report = openai ? openaiReport(obj) : ollamaReport(obj);
  if (openai) report.done = report.done || Array.isArray(obj.choices);
  if (i.translation) {
    buf = Buffer.from(
      JSON.stringify(report.error !== undefined ? { error: report.error } : i.translation.answer(obj)),
    );
  }
  const res = i.res;
  if (res.destroyed) return { kind: "client-gone", answered: true, ttfbMs, latencyMs: since() };
  res.writeHead(statusCode, {
    // A translated answer is rebuilt as Ollama's JSON.
    "content-type": i.translation
      ? "application/json; charset=utf-8"
      : String(headers["content-type"] ?? "application/json"),
    "content-length": String(buf.length),
    ...i.headers,
  });
  res.end(buf);
  if (report.error !== undefined) {
    return { kind: "broken", message: report.error, report, ttfbMs, latencyMs: since() };
  }
  return { kind: "ok", report, ttfbMs, latencyMs: since(), status: statusCode };
};
