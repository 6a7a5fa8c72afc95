import { emitBatch, ingestBatch, loadChunks, loadConfig, runChanges, runLoaderTick, type LoaderTickResult } from '@adhoc-scheduler/shared';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createAwsClients, createDependencies, type Dependencies } from './dependencies.js';

/**
 * The five functions: what each does with what invokes it. Lambda's entry points (ingest.ts,
 * loader.ts, loading.ts, emitter.ts, changes.ts) and the local runtime bind the same handlers to
 * the same dependencies (dependencies.ts), so the same code runs on AWS and on the emulators;
 * only the SDK clients' endpoints and keys differ.
 */

/** The five functions, as Lambda invokes them. */
export const handlers = {
  /** Input topic, through its buffer queue: validate, then delay queue or store. */
  ingest: (deps: Dependencies, event: SQSEvent): Promise<SQSBatchResponse> => ingestBatch(deps, event.Records),
  /** Every loader interval: hand stored events that are coming due to the loading function. */
  loader: (deps: Dependencies): Promise<LoaderTickResult> => runLoaderTick(deps),
  /** Loading queue: move chunks of stored events into the delay queue. */
  loading: (deps: Dependencies, event: SQSEvent): Promise<SQSBatchResponse> => loadChunks(deps, event.Records),
  /** Delay queue: publish each event to its target at its exact due time. */
  emitter: (deps: Dependencies, event: SQSEvent): Promise<SQSBatchResponse> => emitBatch(deps, event.Records),
  /** Changes queue: work one page of a job over many events (a cancel by label, a tenant's resume), and send the next. */
  changes: (deps: Dependencies, event: SQSEvent): Promise<SQSBatchResponse> => runChanges(deps, event.Records),
} as const;

export type FunctionName = keyof typeof handlers;

/** A handler bound to its function's dependencies: what an invocation calls, on Lambda and locally. */
export function bindHandler<E, R>(handle: (deps: Dependencies, event: E) => Promise<R>, deps: Dependencies): (event: E) => Promise<R> {
  return (event) => handle(deps, event);
}

/**
 * A Lambda entry point: builds the function's dependencies from the environment on the first
 * invocation and keeps them for the life of the execution environment.
 */
export function lambdaHandler<E, R>(
  functionName: FunctionName,
  handle: (deps: Dependencies, event: E) => Promise<R>,
): (event: E) => Promise<R> {
  let bound: ((event: E) => Promise<R>) | undefined;
  return (event) => {
    if (!bound) {
      const config = loadConfig();
      bound = bindHandler(handle, createDependencies(functionName, config, createAwsClients(config)));
    }
    return bound(event);
  };
}
