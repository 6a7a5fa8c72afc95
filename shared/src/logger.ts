import { pino, type DestinationStream, type Logger } from 'pino';

/** JSON logs (CloudWatch reads them as structured), one logger per function. */
export function createLogger(name: string, level: string, destination?: DestinationStream): Logger {
  const options = { name, level, base: { fn: name }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}
