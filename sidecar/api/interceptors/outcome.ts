// One shape for interceptors that only watch: `begin` runs as a call starts and returns what
// runs once as it ends — with its error as a ConnectError, or undefined when it succeeded. A
// unary call ends with its answer; a stream when its last message is sent, it fails, or the
// client goes away (then with the reason the call was aborted for).
import { ConnectError, type Interceptor, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";

export type CallEnd = (err: ConnectError | undefined) => void;

export function observeCalls(begin: (req: UnaryRequest | StreamRequest) => CallEnd): Interceptor {
  return (next) => async (req) => {
    const end = begin(req);
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (err) {
      end(ConnectError.from(err));
      throw err;
    }
    if (!res.stream) {
      end(undefined);
      return res;
    }
    return { ...res, message: endsWith(res.message, end, req.signal) };
  };
}

async function* endsWith<T>(messages: AsyncIterable<T>, end: CallEnd, signal: AbortSignal): AsyncIterable<T> {
  let ended = false;
  try {
    yield* messages;
  } catch (err) {
    ended = true;
    end(ConnectError.from(err));
    throw err;
  } finally {
    if (!ended) end(signal.aborted ? ConnectError.from(signal.reason) : undefined);
  }
}
