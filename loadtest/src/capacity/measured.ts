import { FUNCTION_MEMORY_MB } from '@adhoc-scheduler/infra';
import { lambdaMsPerEvent } from './limits.js';

/**
 * What the load test measured of the scheduler's own work, per invocation or per event, which
 * the capacity model takes as the cost of each stage. Each number says which BENCHMARKS.md row
 * (and which results.json field) it comes from; the few that are not measured say so.
 */
export const MEASURED = {
  /**
   * Seconds an ingest invocation takes per batch of 100: 2.1 ms an event, from "Lambda ingest
   * duration (256 MB)", $0.007 per million at steady load in memory (usage.lambda.ingest.billedDurationMs),
   * as the stack's comment on publicIngestMaxConcurrency says (a fifth of a second).
   */
  ingestSecondsPerBatch: (lambdaMsPerEvent(0.007, FUNCTION_MEMORY_MB.ingest) * 100) / 1000,
  /**
   * Seconds a loading invocation takes per event moved: "Lambda loading duration (256 MB)",
   * $0.016 per million, far path in memory (usage.lambda.loading.billedDurationMs). On AWS the
   * requests answer faster than on the emulators: an upper bound there.
   */
  loadingSecondsPerEvent: lambdaMsPerEvent(0.016, FUNCTION_MEMORY_MB.loading) / 1000,
  /**
   * How long before its due time the emitter holds an event: it arrived 1,793 ms before due at
   * p50 (BENCHMARKS.md, Findings, Steady lateness: the stage trace; results.json stagesMs).
   */
  emitterHoldSeconds: 1.793,
  /**
   * Not measured on AWS: what an emitter batch of 100 takes once due, ten PublishBatch calls
   * in flight together and the ends' writes. SNS and DynamoDB answer within tens of
   * milliseconds; a quarter of a second allows each call 100 ms twice. Check it against the
   * emitter's Duration metric of a deployed stack.
   */
  emitterBusySecondsPerBatch: 0.25,
  /**
   * Loader tick time per event found: the far run's tick took 3.7 s for 100,000 events (136
   * queries, 1,000 chunks of 100 ids), BENCHMARKS.md, Findings, Far path (results.json
   * details.loaderTicksWithEvents[0].durationMs).
   */
  loaderSecondsPerEvent: 3.7 / 100_000,
  /** One query of the loader's index: a GSI page of 1,000 keys took 17 ms (p50) on DynamoDB Local on the project's machine; AWS answers faster. */
  loaderQuerySeconds: 0.017,
} as const;

/**
 * Bytes the scheduler adds to a payload: the SNS message's attributes and the delay-queue
 * message's record fields (the event's ids, topics and times). Rounded up, for billing by 64 KiB.
 */
export const MESSAGE_OVERHEAD_BYTES = 600;
/** The record of a stored event without its payload (ids, topics, times, digest, index keys). */
export const RECORD_BYTES = 400;
