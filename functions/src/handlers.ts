import { emitBatch, ingestBatch, loadChunks, runLoaderTick, type LoaderTickResult } from '@adhoc-scheduler/shared';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Dependencies } from './wiring.js';

/**
 * The four functions, as Lambda invokes them. The Lambda entry points and the local runtime
 * both call these, so the same code runs on AWS and on the emulators.
 */
export const handlers = {
  /** Input topic, through its buffer queue: validate, then delay queue or store. */
  ingest: (deps: Dependencies, event: SQSEvent): Promise<SQSBatchResponse> => ingestBatch(deps, event.Records),
  /** Every loader interval: hand stored events that are coming due to the loading function. */
  loader: (deps: Dependencies): Promise<LoaderTickResult> => runLoaderTick(deps),
  /** Loading queue: move chunks of stored events into the delay queue. */
  loading: (deps: Dependencies, event: SQSEvent): Promise<SQSBatchResponse> => loadChunks(deps, event.Records),
  /** Delay queue: publish each event to its target at its exact due time. */
  emitter: (deps: Dependencies, event: SQSEvent): Promise<SQSBatchResponse> => emitBatch(deps, event.Records),
} as const;

export type FunctionName = keyof typeof handlers;
