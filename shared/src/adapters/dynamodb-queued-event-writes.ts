import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Carry, HoldOutcome, Requeue } from '../app/ports/event-store.js';
import { EVENT_STATE, type EventRecord } from '../domain/lifecycle.js';
import { openEventsCounterId } from '../domain/table-keys.js';
import { batchPut } from './dynamodb-batches.js';
import { withStoredPayload } from './dynamodb-event-item-codec.js';
import type { EventTable } from './dynamodb-event-reads.js';
import { PAUSED_CONDITION } from './dynamodb-tenant-pauses.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

/**
 * Writes on a queued event by the delay-queue copy that carries it (EventStore.requeue, hold
 * and carry): each applies only at the version read and while the record still names that copy.
 */

/** Gives a queued event a new copy token before its input message's redelivery sends it again (see EventStore.requeue). */
export async function requeueEvent(table: EventTable, id: string, requeue: Requeue): Promise<boolean> {
  try {
    await table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { [TABLE.partitionKey]: id },
        UpdateExpression: 'SET queuedBy = :queuedBy, resentAt = :now',
        // As placedOnDelayQueueBy reads the record: its create placed version 1, a reschedule each later one.
        ConditionExpression: '#state = :queued AND version = :version AND attribute_not_exists(loadedBy) AND #placedBy = :by',
        ExpressionAttributeNames: { '#state': 'state', '#placedBy': requeue.version === 1 ? 'inputMessageId' : 'lastChangeBy' },
        ExpressionAttributeValues: {
          ':queuedBy': requeue.queuedBy,
          ':now': requeue.now,
          ':queued': EVENT_STATE.queued,
          ':version': requeue.version,
          ':by': requeue.placedBy,
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw transient('UpdateItem', error);
  }
}

/** Holds an event that came due while its tenant is paused, in one write with a check of the pause (see EventStore.hold). */
export async function holdEvent(
  table: EventTable,
  record: EventRecord,
  from: string,
  hold: { readonly payload: string; readonly heldKey: string; readonly now: number },
): Promise<HoldOutcome> {
  try {
    await table.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table.tableName,
              Key: { [TABLE.partitionKey]: record.id },
              // The payload in the record, whatever its size (at most SNS's 256 KiB): no payload item outlives a held event without an expiry.
              UpdateExpression:
                // Its held partition, whatever key it had (`q`, `s`, or none): a resume reads it there, a listing shows it.
                'SET #state = :held, heldAt = :now, payload = :payload, payloadKept = :inRecord, #tenantShard = :heldKey ' +
                'REMOVE queuedBy, loadedBy, #ttl',
              ConditionExpression: '#state = :queued AND version = :version AND queuedBy = :from',
              ExpressionAttributeNames: {
                '#state': 'state',
                '#tenantShard': TABLE.tenantShardKey,
                '#ttl': TABLE.ttlAttribute,
              },
              ExpressionAttributeValues: {
                ':held': EVENT_STATE.held,
                ':now': hold.now,
                ':payload': hold.payload,
                ':inRecord': 'record',
                ':heldKey': hold.heldKey,
                ':queued': EVENT_STATE.queued,
                ':version': record.version,
                ':from': from,
              },
            },
          },
          {
            ConditionCheck: {
              TableName: table.tableName,
              Key: { [TABLE.partitionKey]: openEventsCounterId(record.tenant) },
              ConditionExpression: PAUSED_CONDITION,
            },
          },
        ],
      }),
    );
    return 'held';
  } catch (error) {
    const reasons = (error as { CancellationReasons?: { Code?: string }[] })?.CancellationReasons;
    if (reasons?.[0]?.Code === 'ConditionalCheckFailed') return 'changed';
    if (reasons?.[1]?.Code === 'ConditionalCheckFailed') return 'not-paused';
    throw transient('TransactWriteItems', error);
  }
}

/** Records where the emitter carried a moved event's payload from its copy `from` (see EventStore.carry). */
export async function carryEvent(table: EventTable, record: EventRecord, from: string, onward: Carry, now: number): Promise<boolean> {
  const stored =
    onward.to === 'table'
      ? withStoredPayload({ ...record, state: EVENT_STATE.scheduled, carriedToTableAt: now }, onward.payload, record, record.expiresAt)
      : undefined;
  // Written before the record names it, as at ingest; and noted in the due directory before the record is listed.
  await Promise.all([
    stored?.payloadItem === undefined ? undefined : batchPut(table.client, table.tableName, [stored.payloadItem]),
    onward.to === 'table' ? table.dueDirectory.note([record]) : undefined,
  ]);
  const inline = stored?.record.payloadKept === 'record';
  try {
    await table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { [TABLE.partitionKey]: record.id },
        UpdateExpression:
          onward.to === 'queue'
            ? 'SET queuedBy = :queuedBy, carriedAt = :now REMOVE carriedBy'
            : `SET #state = :scheduled, carriedToTableAt = :now, #tenantShard = :tenantShard, payloadKept = :kept${inline ? ', payload = :payload' : ''} REMOVE carriedBy, queuedBy`,
        ConditionExpression: '#state = :queued AND version = :version AND carriedBy = :from',
        ExpressionAttributeNames: {
          '#state': 'state',
          ...(onward.to === 'table' ? { '#tenantShard': TABLE.tenantShardKey } : {}),
        },
        ExpressionAttributeValues: {
          ':queued': EVENT_STATE.queued,
          ':version': record.version,
          ':from': from,
          ':now': now,
          ...(onward.to === 'queue'
            ? { ':queuedBy': onward.queuedBy }
            : {
                ':scheduled': EVENT_STATE.scheduled,
                ':tenantShard': onward.tenantShard,
                ':kept': stored?.record.payloadKept,
                ...(inline ? { ':payload': onward.payload } : {}),
              }),
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw transient('UpdateItem', error);
  }
}
