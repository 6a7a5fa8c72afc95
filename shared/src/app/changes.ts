import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { type BulkCancelDeps, workBulkCancelPages } from './bulk-cancel.js';
import { type ResumeDeps, workResumePages } from './resume.js';

/**
 * The changes function: jobs over many of a tenant's events, a page at a time, each page a
 * message of the changes queue that sends the next: a resume's (resume.ts) or a bulk cancel's
 * (bulk-cancel.ts).
 */

function isResumePage(record: SQSRecord): boolean {
  try {
    return (JSON.parse(record.body) as { kind?: unknown })?.kind === 'resume';
  } catch {
    return false;
  }
}

/** The changes function: each record a page of a job, a resume's or a bulk cancel's, each worked by its own kind. */
export async function runChanges(deps: ResumeDeps & BulkCancelDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const resumes: SQSRecord[] = [];
  const bulkCancels: SQSRecord[] = [];
  for (const record of records) (isResumePage(record) ? resumes : bulkCancels).push(record);
  // A kind with no record in the batch fails nothing and counts nothing.
  const [resumed, cancelled] = await Promise.all([workResumePages(deps, resumes), workBulkCancelPages(deps, bulkCancels)]);
  return { batchItemFailures: [...resumed.batchItemFailures, ...cancelled.batchItemFailures] };
}
