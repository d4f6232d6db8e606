export { type LogFn, type Logger, silentLogger } from "./logger.js";
