export { type LogFn, type Logger, silentLogger } from "./logger.js";
export { redactSecrets, redactUrl } from "./redact.js";
