// The state layer's files take the logger from here; the type lives in src/log.
export { type LogFn, type Logger, silentLogger } from "../log/index.js";
