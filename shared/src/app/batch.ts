import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { Logger } from './ports.js';

/**
 * Runs one handler per SQS record concurrently and reports the records that failed, so that
 * SQS retries only those (Lambda's ReportBatchItemFailures contract).
 */
export async function processBatch(
  records: readonly SQSRecord[],
  logger: Logger,
  handle: (record: SQSRecord) => Promise<void>,
): Promise<SQSBatchResponse> {
  const results = await Promise.allSettled(records.map((record) => handle(record)));
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  results.forEach((result, index) => {
    const record = records[index];
    if (result.status === 'rejected' && record) {
      logger.error({ err: result.reason, messageId: record.messageId }, 'record failed; it will be retried');
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  });
  return { batchItemFailures };
}

/** How many times SQS has handed out this record (1 on the first delivery). */
export function receiveCount(record: SQSRecord): number {
  return Number(record.attributes.ApproximateReceiveCount) || 1;
}

/** When the message was sent to its queue (SQS's SentTimestamp), epoch ms; 0 when the record does not say. */
export function sentAt(record: SQSRecord): number {
  return Number(record.attributes.SentTimestamp) || 0;
}
