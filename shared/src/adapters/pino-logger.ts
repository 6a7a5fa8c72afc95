import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/** The process's logger (pino); the application sees it only through its Logger port. */
export type ServiceLogger = PinoLogger;

/**
 * JSON logs (CloudWatch reads them as structured). `fn` names the function a line comes from:
 * on Lambda each function's logger is made with it; the local runtime, which runs every function
 * in one process, makes one without and binds `fn` per function with `logger.child({ fn })`, so
 * no line carries the key twice.
 */
export function createLogger(
  level: string,
  options: { readonly fn?: string; readonly destination?: DestinationStream } = {},
): ServiceLogger {
  const settings = { level, base: options.fn === undefined ? {} : { fn: options.fn }, timestamp: pino.stdTimeFunctions.isoTime };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
