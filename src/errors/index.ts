export { ErrorCode } from "./codes.js";
export { invalidArgument, KubemootError } from "./kubemoot-error.js";
export { hasUnprintable, MAX_QUOTED_CHARS, printable, quoteInput } from "./quote.js";
export { type ErrorReason, type ErrorShape, httpAnswer, WIRE, type WireRow, wireRow } from "./wire.js";
