export { ErrorCode, invalidArgument, KubemootError, type KubemootErrorOptions } from "./kubemoot-error.js";
