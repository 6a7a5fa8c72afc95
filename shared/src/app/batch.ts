import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { LastError, LastErrors } from './ports/errors-and-refusals.js';
import type { Clock, Logger } from './ports/process.js';

/**
 * Where a function keeps the last error of each record it fails, for the dead-letter tools
 * (`scripts/admin dead-letters`): the port, the function's name and its clock.
 */
export interface FailureLog {
  readonly lastErrors: Pick<LastErrors, 'write'>;
  readonly fn: string;
  readonly clock: Pick<Clock, 'now'>;
}

/** An error message kept at most this long: enough to say what failed, far below DynamoDB's 400 KB item. */
const LAST_ERROR_MESSAGE_CHARS = 2_000;

/** A record that failed, and why. */
export interface FailedRecord {
  readonly record: SQSRecord;
  readonly reason: unknown;
}

/** What a function fails its records with: its logger, and its failure log if it keeps last errors. */
export interface BatchLog {
  readonly logger: Logger;
  readonly failureLog?: FailureLog | undefined;
}

/**
 * Runs one handler per SQS record concurrently and reports the records that failed, so that
 * SQS retries only those (Lambda's ReportBatchItemFailures contract).
 */
export async function processBatch(
  records: readonly SQSRecord[],
  log: BatchLog,
  handle: (record: SQSRecord) => Promise<void>,
): Promise<SQSBatchResponse> {
  const results = await Promise.allSettled(records.map((record) => handle(record)));
  const failed = results.flatMap((result, index): FailedRecord[] => {
    const record = records[index];
    return result.status === 'rejected' && record ? [{ record, reason: result.reason }] : [];
  });
  return { batchItemFailures: await failRecords(failed, log) };
}

/**
 * Fails records to be retried: logs each, and with the function's failure log keeps each one's
 * error by its message id, best effort (a record that keeps failing ends in a dead-letter queue,
 * where an operator sees why beside it). Returns them as SQS's batch item failures.
 */
export async function failRecords(
  failed: readonly FailedRecord[],
  { logger, failureLog }: BatchLog,
): Promise<SQSBatchResponse['batchItemFailures']> {
  for (const { record, reason } of failed) logger.error({ err: reason, messageId: record.messageId }, 'record failed; it will be retried');
  await keepLastErrors(failureLog, logger, failed);
  return failed.map(({ record }) => ({ itemIdentifier: record.messageId }));
}

/** Writes the failed records' errors; a failure to write is logged, never fails the batch (the records are retried all the same). */
async function keepLastErrors(log: FailureLog | undefined, logger: Logger, failed: readonly FailedRecord[]): Promise<void> {
  // Nothing failed, or the function keeps no last errors.
  if (log === undefined || failed.length === 0) return;
  const at = log.clock.now();
  const errors = failed.map(({ record, reason }): LastError => {
    const error = reason instanceof Error ? reason : new Error(String(reason));
    return {
      messageId: record.messageId,
      fn: log.fn,
      error: { name: error.name, message: error.message.slice(0, LAST_ERROR_MESSAGE_CHARS) },
      at,
      receiveCount: receiveCount(record),
    };
  });
  try {
    await log.lastErrors.write(errors);
  } catch (error) {
    logger.warn({ err: error, messageIds: errors.map(({ messageId }) => messageId) }, 'could not keep the last error of failed records');
  }
}

/** How many times SQS has handed out this record (1 on the first delivery). */
export function receiveCount(record: SQSRecord): number {
  return Number(record.attributes.ApproximateReceiveCount) || 1;
}

/** When the message was sent to its queue (SQS's SentTimestamp), epoch ms; 0 when the record does not say. */
export function sentAt(record: SQSRecord): number {
  return Number(record.attributes.SentTimestamp) || 0;
}
