import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { Clock, LastError, LastErrors, Logger } from './ports.js';

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

/**
 * Runs one handler per SQS record concurrently and reports the records that failed, so that
 * SQS retries only those (Lambda's ReportBatchItemFailures contract). With the function's failure
 * log, each failed record's error is kept by its message id, best effort: a record that keeps
 * failing ends in a dead-letter queue, where an operator sees why beside it.
 */
export async function processBatch(
  records: readonly SQSRecord[],
  { logger, failureLog }: { readonly logger: Logger; readonly failureLog?: FailureLog | undefined },
  handle: (record: SQSRecord) => Promise<void>,
): Promise<SQSBatchResponse> {
  const results = await Promise.allSettled(records.map((record) => handle(record)));
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  const failed: { readonly record: SQSRecord; readonly reason: unknown }[] = [];
  results.forEach((result, index) => {
    const record = records[index];
    if (result.status === 'rejected' && record) {
      logger.error({ err: result.reason, messageId: record.messageId }, 'record failed; it will be retried');
      batchItemFailures.push({ itemIdentifier: record.messageId });
      failed.push({ record, reason: result.reason });
    }
  });
  await keepLastErrors(failureLog, logger, failed);
  return { batchItemFailures };
}

/** Writes the failed records' errors; a failure to write is logged, never fails the batch (the records are retried all the same). */
export async function keepLastErrors(
  log: FailureLog | undefined,
  logger: Logger,
  failed: readonly { readonly record: SQSRecord; readonly reason: unknown }[],
): Promise<void> {
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
