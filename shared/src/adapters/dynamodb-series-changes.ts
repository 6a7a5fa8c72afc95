import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SeriesChangeWrite } from '../app/ports/series-store.js';
import { payloadDigest, SERIES_STATE, type SeriesRecord, storedSpec } from '../domain/series.js';
import type { SeriesRevision } from '../domain/series-changes.js';
import { tenantShardKey } from '../domain/table-keys.js';
import { batchPut } from './dynamodb-batches.js';
import { followsLastChangeCondition } from './dynamodb-conditional-writes.js';
import { withStoredPayload } from './dynamodb-event-item-codec.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

/** A client's change of a series (see series-changes.ts), written to its record in the events' table (see dynamodb-series-store.ts). */

/** An item kept while its series lasts: no expiry. */
export function withoutExpiry(item: Record<string, unknown>): Record<string, unknown> {
  const { [TABLE.ttlAttribute]: _expiry, ...kept } = item;
  return kept;
}

/**
 * Writes a revision at the version read and after the last change applied; the item as written,
 * or undefined when the condition failed. A paused series leaves the tenant index and has no
 * expiry (it may last any time); a running one is keyed at its next occurrence. A new payload's
 * item, named by its digest, is written before the record names it.
 */
export async function writeSeriesChange(
  client: DynamoDBDocumentClient,
  tableName: string,
  series: SeriesRecord,
  revision: SeriesRevision,
  write: SeriesChangeWrite,
): Promise<Record<string, unknown> | undefined> {
  const paused = revision.pausedAt !== undefined;
  const set: Record<string, unknown> = {
    spec: storedSpec(revision.spec),
    catchUpMs: revision.catchUpMs,
    cursorAfter: revision.cursor.after,
    fired: revision.cursor.fired,
    revision: revision.revision,
    version: series.version + 1,
    lastChangeAt: write.publishedAt,
    lastChangeBy: write.by,
    ...(paused
      ? { pausedAt: revision.pausedAt }
      : {
          [TABLE.dueAtKey]: revision.dueAt,
          [TABLE.tenantShardKey]: tenantShardKey(series.tenant, 's', write.shard),
          [TABLE.ttlAttribute]: write.expiresAt,
        }),
  };
  // Late occurrences owed by the old definition, or from before a pause, are not owed after a change : a pause delivers none due while paused, and a replacement owes only its own.
  const remove = [...(paused ? [TABLE.dueAtKey, TABLE.tenantShardKey, TABLE.ttlAttribute] : ['pausedAt']), 'owed'];
  if (revision.payload !== undefined) {
    const digest = payloadDigest(revision.payload);
    const stored = withStoredPayload(
      await currentItem(client, tableName, series.id),
      revision.payload,
      { id: series.id, requestHash: digest },
      Number.NaN,
    );
    if (stored.payloadItem !== undefined) await batchPut(client, tableName, [withoutExpiry(stored.payloadItem)]);
    Object.assign(set, { payloadDigest: digest, payloadKept: stored.record.payloadKept });
    if (stored.payloadItem === undefined) set.payload = revision.payload;
    else remove.push('payload');
  }
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {
    ':active': SERIES_STATE.active,
    ':tenant': series.tenant,
    ':version': series.version,
    ':at': write.publishedAt,
    ':by': write.by,
  };
  const name = (attribute: string) => {
    const key = `#a${Object.keys(names).length}`;
    names[key] = attribute;
    return key;
  };
  const sets = Object.entries(set).map(([attribute, value], index) => {
    values[`:v${index}`] = value;
    return `${name(attribute)} = :v${index}`;
  });
  const removes = remove.map(name);
  const lastAt = name('lastChangeAt');
  const lastBy = name('lastChangeBy');
  try {
    const result = await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { [TABLE.partitionKey]: series.id },
        UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`,
        ConditionExpression: `seriesState = :active AND tenant = :tenant AND version = :version AND ${followsLastChangeCondition(lastAt, lastBy)}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return result.Attributes;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw transient('UpdateItem', error);
  }
}

/** The record as stored, its payload left out: what a new payload is weighed with, to keep it in the record or not. */
async function currentItem(client: DynamoDBDocumentClient, tableName: string, id: string): Promise<Record<string, unknown>> {
  try {
    const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: id }, ConsistentRead: true }));
    const { payload: _payload, ...rest } = Item ?? {};
    return rest;
  } catch (error) {
    throw transient('GetItem', error);
  }
}
