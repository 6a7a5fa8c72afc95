import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { JOB_CURSOR, type BulkCancelJob, type NewBulkCancelJob } from '../domain/bulk-cancel.js';
import { jobItemId } from '../domain/table-keys.js';
import type { BulkCancelJobs, JobStep } from '../app/ports/bulk-cancel.js';
import { batchGet } from './dynamodb-batches.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

const optionalNumber = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const optionalString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function toJob(item: Readonly<Record<string, unknown>>): BulkCancelJob {
  return {
    jobId: String(item.jobId),
    tenant: String(item.tenant),
    label: optionalString(item.label),
    fromMs: Number(item.fromMs),
    dueBefore: optionalNumber(item.dueBefore),
    failureTopic: optionalString(item.failureTopic),
    dryRun: item.dryRun === true,
    createdAt: Number(item.createdAt),
    expiresAt: Number(item[TABLE.ttlAttribute]),
    state: item.state === 'done' ? 'done' : 'running',
    cursor: String(item.cursor),
    movedBy: optionalString(item.movedBy),
    counts: {
      cancelled: Number(item.cancelled ?? 0),
      refused: { ended: Number(item.refusedEnded ?? 0), emitting: Number(item.refusedEmitting ?? 0) },
    },
    doneAt: optionalNumber(item.doneAt),
  };
}

/**
 * Bulk cancel jobs, one item each in the events' table. Written with UpdateItem only (a create is
 * an update conditional on the item being new), and read with BatchGetItem, as the functions that
 * write them already may.
 */
export class DynamoDbBulkCancelJobs implements BulkCancelJobs {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(job: NewBulkCancelJob): Promise<{ readonly created: boolean; readonly job: BulkCancelJob }> {
    const fields: Record<string, unknown> = {
      kind: 'bulk-cancel',
      jobId: job.jobId,
      tenant: job.tenant,
      label: job.label,
      fromMs: job.fromMs,
      dueBefore: job.dueBefore,
      failureTopic: job.failureTopic,
      dryRun: job.dryRun,
      createdAt: job.createdAt,
      [TABLE.ttlAttribute]: job.expiresAt,
      state: 'running',
      cursor: JOB_CURSOR.start,
      cancelled: 0,
      refusedEnded: 0,
      refusedEmitting: 0,
    };
    const set = Object.entries(fields).filter(([, value]) => value !== undefined);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: jobItemId(job.jobId) },
          UpdateExpression: `SET ${set.map((_, index) => `#f${index} = :f${index}`).join(', ')}`,
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: {
            '#id': TABLE.partitionKey,
            ...Object.fromEntries(set.map(([name], index) => [`#f${index}`, name])),
          },
          ExpressionAttributeValues: Object.fromEntries(set.map(([, value], index) => [`:f${index}`, value])),
        }),
      );
      return { created: true, job: toJob(fields) };
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
    }
    const existing = await this.get(job.jobId);
    // Refused as existing, then gone: only its expiry removes a job, long after the request could come again.
    if (existing === undefined) throw new Error(`job ${job.jobId} exists and cannot be read`);
    return { created: false, job: existing };
  }

  async get(jobId: string): Promise<BulkCancelJob | undefined> {
    const item = (await batchGet(this.client, this.tableName, [jobItemId(jobId)])).get(jobItemId(jobId));
    return item === undefined ? undefined : toJob(item);
  }

  async advance(jobId: string, step: JobStep): Promise<boolean> {
    const { counts } = step;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: jobItemId(jobId) },
          UpdateExpression:
            'SET #cursor = :to, movedBy = :by, #state = :state, #ttl = :ttl' +
            (step.done ? ', doneAt = :now' : '') +
            ' ADD cancelled :cancelled, refusedEnded :ended, refusedEmitting :emitting',
          ConditionExpression: '#cursor = :from',
          ExpressionAttributeNames: { '#cursor': 'cursor', '#state': 'state', '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: {
            ':from': step.from,
            ':to': step.to,
            ':by': step.movedBy,
            ':state': step.done ? 'done' : 'running',
            ':ttl': step.expiresAt,
            ...(step.done ? { ':now': step.now } : {}),
            ':cancelled': counts.cancelled,
            ':ended': counts.refused.ended,
            ':emitting': counts.refused.emitting,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw transient('UpdateItem', error);
    }
  }
}
