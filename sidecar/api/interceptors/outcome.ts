// One shape for interceptors that only watch: `begin` runs as a call starts and returns what
// runs once as it ends — with its error as a ConnectError, or undefined when it succeeded. A
// unary call ends with its answer; a stream when its last message is sent, it fails, or the
// client goes away (then with the reason the call was aborted for). `begin` may also return a
// scope to run the handler in — and each of a stream's steps, which run the handler's code too
// (the tracing interceptor's trace context).
import { ConnectError, type Interceptor, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";

export type CallEnd = (err: ConnectError | undefined) => void;

/** Runs `f` in the call's scope. */
export type CallScope = <R>(f: () => R) => R;

export function observeCalls(
  begin: (req: UnaryRequest | StreamRequest) => CallEnd | { end: CallEnd; scope: CallScope },
): Interceptor {
  return (next) => async (req) => {
    const begun = begin(req);
    const { end, scope } = typeof begun === "function" ? { end: begun, scope: undefined } : begun;
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await (scope ? scope(() => next(req)) : next(req));
    } catch (err) {
      end(ConnectError.from(err));
      throw err;
    }
    if (!res.stream) {
      end(undefined);
      return res;
    }
    return { ...res, message: endsWith(res.message, end, req.signal, scope) };
  };
}

async function* endsWith<T>(
  messages: AsyncIterable<T>,
  end: CallEnd,
  signal: AbortSignal,
  scope: CallScope | undefined,
): AsyncIterable<T> {
  let ended = false;
  try {
    if (scope === undefined) {
      yield* messages;
    } else {
      const it = messages[Symbol.asyncIterator]();
      try {
        for (let r = await scope(() => it.next()); !r.done; r = await scope(() => it.next())) yield r.value;
      } finally {
        await it.return?.();
      }
    }
  } catch (err) {
    ended = true;
    end(ConnectError.from(err));
    throw err;
  } finally {
    if (!ended) end(signal.aborted ? ConnectError.from(signal.reason) : undefined);
  }
}
