export { ErrorCode, invalidArgument, KubemootError, type KubemootErrorOptions } from "./kubemoot-error.js";
export { hasUnprintable, MAX_QUOTED_CHARS, printable, quoteInput } from "./quote.js";
