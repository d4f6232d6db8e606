// The one logging surface of the library modules (state, operator, publisher, proxy): a
// subset of pino's, so a pino logger (or a child of one) is passed as is; no adapter needed.
// Logs never carry prompt text.

export type LogFn = (obj: object, msg?: string) => void;

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

const noop: LogFn = () => undefined;

/** Discards everything (the default when no logger is given). */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
