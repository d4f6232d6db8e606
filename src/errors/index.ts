export { ErrorCode } from "./codes.js";
export { invalidArgument, KubemootError, type KubemootErrorOptions } from "./kubemoot-error.js";
export { hasUnprintable, MAX_QUOTED_CHARS, printable, quoteInput } from "./quote.js";
export {
  type ErrorDetail,
  type ErrorReason,
  type ErrorShape,
  type HttpAnswer,
  httpAnswer,
  type ReasonOf,
  type RpcCode,
  WIRE,
  type WireRow,
  wireRow,
} from "./wire.js";
