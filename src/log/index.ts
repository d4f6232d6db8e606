// The Logger type every module logs through (pino underneath), and the redaction of credentials
// in URLs and messages before they are logged.
export { type Logger, silentLogger } from "./logger.js";
export { redactSecrets, redactUrl } from "./redact.js";
