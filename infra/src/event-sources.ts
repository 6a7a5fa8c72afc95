/**
 * How the functions' SQS event sources batch, shared by the CDK app (Lambda's event source
 * mappings) and the local runtime (its pollers), so both run the functions alike.
 */
export const EVENT_SOURCES = {
  /**
   * The ingest function waits up to this long to fill a batch of 10: at moderate traffic it
   * cuts invocations, and quota-counter writes, up to tenfold. It delays only events due sooner
   * than the ingest path itself takes.
   */
  ingestBatchingWindowSeconds: 1,
} as const;
