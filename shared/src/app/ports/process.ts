/** What every service asks of its process: the time, a log and metrics. */

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** What the application logs: a line at a level, with the fields that say what it is about (JSON on Lambda). */
export interface Logger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Counters and timings, published without extra API calls (EMF on Lambda). */
export interface SchedulerMetrics {
  count(name: MetricName, value?: number, reason?: string): void;
  latenessMs(value: number): void;
  /** How far behind the loader's cursor is at the start of a tick (0 when on time). */
  loaderBacklogSeconds(value: number): void;
  flush(): void;
}

export type MetricName =
  | 'EventsIngested'
  | 'EventsRejected'
  | 'EventsStored'
  | 'EventsDelayed'
  | 'EventsLoaded'
  | 'EventsEmitted'
  | 'EventsFailed'
  | 'EventsCancelled'
  | 'EventsRescheduled'
  | 'DuplicatesSuppressed'
  /** Delay-queue messages of a cancelled or rescheduled version, dropped by the emitter. */
  | 'StaleMessagesDropped'
  /** Events found already emitted when their emission was recorded: two copies were emitted at once. */
  | 'DuplicateEmissions'
  /** Publishes that failed for a reason a retry may fix, and were put back to be retried later. */
  | 'PublishRetries'
  /** Open events found overdue by the loader's sweep and sent to the delay queue again. */
  | 'EventsRepaired'
  /** Rescheduled events whose payload the emitter carried on from their old delay-queue copy (see EventRecord.carriedBy). */
  | 'EventsCarried'
  /** Events that came due while their tenant was paused, held until it resumes. */
  | 'EventsHeld'
  /** Held events sent to the delay queue by their tenant's resume. */
  | 'EventsResumed'
  /** Refusals ingest could not write to the refusal log (reported on failure topics and in the log all the same). */
  | 'RefusalsNotKept';
