/**
 * How the functions' SQS event sources batch, shared by the CDK app (Lambda's event source
 * mappings) and the local runtime (its pollers), so both run the functions alike. Lambda takes
 * more than 10 messages a batch only with a batching window, of at least a second.
 */
export const EVENT_SOURCES = {
  /**
   * Ingest waits up to a second to fill a batch of 100: at moderate traffic it cuts invocations
   * and quota-counter writes (one per batch and tenant) up to a hundredfold. It delays only
   * events due sooner than the ingest path itself takes.
   */
  ingest: { batchSize: 100, batchingWindowSeconds: 1 },
  loading: { batchSize: 10, batchingWindowSeconds: 0 },
  /**
   * The emitter gathers up to 100 events a batch for up to a second: fewer, fuller invocations,
   * one counter write per batch and tenant. Events therefore reach it at least the emitter lead
   * (1.3 s by default) before they are due, the window included.
   */
  emitter: { batchSize: 100, batchingWindowSeconds: 1 },
} as const;

export type EventSourceName = keyof typeof EVENT_SOURCES;
