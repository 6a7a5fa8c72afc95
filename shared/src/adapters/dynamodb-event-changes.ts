import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ChangeRefused, ChangeRequest, ChangeScope, EventStore } from '../app/ports/event-store.js';
import type { ScheduledEvent } from '../domain/event.js';
import { EVENT_STATE, eventOf, isOpen, type EventRecord } from '../domain/lifecycle.js';
import { shardOf } from '../domain/sharding.js';
import { payloadItemId, tenantShardKey } from '../domain/table-keys.js';
import { batchPut, pauseBeforeRound } from './dynamodb-batches.js';
import { followsLastChangeCondition } from './dynamodb-conditional-writes.js';
import { labelEntries, toRecord } from './dynamodb-event-item-codec.js';
import { readEvents, storedPayload, type EventTable } from './dynamodb-event-reads.js';
import { isConditionFailure, TABLE, transient, withoutSdkRetries } from './dynamodb-table.js';

/**
 * A client's changes of one event (EventStore.cancel and reschedule): each a conditional write
 * that holds the change cutoff as of the write, then the payload item's expiry and the label
 * entries moved after it.
 */

/** A reschedule as the store writes it. */
type RescheduleChange = Parameters<EventStore['reschedule']>[2];

/** Open, of this tenant, and due after the change cutoff (or held, whenever due): what cancel and reschedule require. */
const CHANGEABLE =
  'attribute_exists(#id) AND tenant = :tenant AND (#state = :held OR (#state IN (:scheduled, :queued) AND #due > :cutoff))';

/**
 * What a cancel requires, the event held or not: a held one also leaves its held partition for
 * its stored one, which an update cannot do for one state alone, so each has its own write.
 */
const CANCELLABLE = {
  open: 'attribute_exists(#id) AND tenant = :tenant AND #state IN (:scheduled, :queued) AND #due > :cutoff',
  held: 'attribute_exists(#id) AND tenant = :tenant AND #state = :held',
} as const;

/** Attempts at a cancel's or reschedule's write before its input message is left to be retried. */
const CHANGE_WRITE_ATTEMPTS = 3;

/** Cancels an event and frees its place in the quota, in one transaction (see EventStore.cancel). */
export async function cancelEvent(
  table: EventTable,
  id: string,
  scope: ChangeScope,
  change: ChangeRequest & { readonly expiresAt: number },
): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused> {
  let cancelled = await writeCancel(table, id, scope, change, 'open');
  let current = cancelled === undefined ? (await readEvents(table, [id])).get(id) : undefined;
  if (current?.state === EVENT_STATE.held) {
    cancelled = await writeCancel(table, id, scope, change, 'held');
    current = cancelled === undefined ? (await readEvents(table, [id])).get(id) : undefined;
  }
  if (cancelled === undefined) return { outcome: 'refused', current };
  table.counters.freed(scope.tenant);
  return { outcome: 'cancelled' };
}

/** A cancel's transaction, for an event held or not (see CANCELLABLE); undefined when refused. */
function writeCancel(
  table: EventTable,
  id: string,
  scope: ChangeScope,
  change: ChangeRequest & { readonly expiresAt: number },
  as: keyof typeof CANCELLABLE,
): Promise<unknown> {
  const held = as === 'held';
  return writeChange(table, 'TransactWriteItems', isCancelledTransaction, (now, abortSignal) =>
    table.client.send(
      withoutSdkRetries(
        // The record and its place in the quota change together: a retry can neither free it twice nor leave it taken.
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table.tableName,
                Key: { [TABLE.partitionKey]: id },
                UpdateExpression:
                  'SET #state = :cancelled, cancelledAt = :now, cancelledBy = :by, #ttl = :ttl' +
                  // Out of its held partition, still listed: no pass over held events reads it again.
                  (held ? ', #tenantShard = :stored' : ''),
                ConditionExpression: CANCELLABLE[as],
                ExpressionAttributeNames: {
                  '#id': TABLE.partitionKey,
                  '#state': 'state',
                  ...(held ? { '#tenantShard': TABLE.tenantShardKey } : { '#due': TABLE.dueAtKey }),
                  '#ttl': TABLE.ttlAttribute,
                },
                ExpressionAttributeValues: {
                  ':tenant': scope.tenant,
                  ...(held
                    ? { ':held': EVENT_STATE.held, ':stored': tenantShardKey(scope.tenant, 's', shardOf(id, table)) }
                    : {
                        ':cutoff': now + scope.cutoffMs,
                        ':scheduled': EVENT_STATE.scheduled,
                        ':queued': EVENT_STATE.queued,
                      }),
                  ':cancelled': EVENT_STATE.cancelled,
                  ':now': now,
                  ':by': change.by,
                  ':ttl': change.expiresAt,
                },
              },
            },
            { Update: table.counters.releaseUpdate(scope.tenant, 1) },
          ],
        }),
      ),
      { abortSignal },
    ),
  );
}

/** Moves an event to a new due time, as a new version (see EventStore.reschedule). */
export async function rescheduleEvent(
  table: EventTable,
  id: string,
  scope: ChangeScope,
  change: RescheduleChange,
): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent | undefined } | ChangeRefused> {
  // Wherever its payload is, the event may be listed among its tenant's stored ones at its new due time.
  await table.dueDirectory.note([{ tenant: scope.tenant, dueAt: change.dueAt }]);
  const rescheduled = await writeChange(table, 'UpdateItem', isConditionFailure, (now, abortSignal) =>
    table.client.send(withoutSdkRetries(new UpdateCommand(rescheduleUpdate(table, id, scope, change, now, 'table'))), { abortSignal }),
  );
  if (rescheduled !== undefined) {
    const old = toRecord(rescheduled.Attributes ?? {});
    // The payload item holds the expiry of the record at its latest, never less: it moves only when the record's moves past it.
    if (change.expiresAt > old.expiresAt) await keepPayloadUntil(table, old, change.expiresAt);
    await moveLabelEntries(table, { ...old, dueAt: change.dueAt, expiresAt: change.expiresAt }, change.placement.shard);
    // A payload kept apart is still the one written at ingest; the item was never rewritten.
    return {
      outcome: 'rescheduled',
      event: eventOf({ ...old, dueAt: change.dueAt, version: old.version + 1 }, await storedPayload(table, old)),
    };
  }
  let current = (await readEvents(table, [id])).get(id);
  // Its payload only in its delay-queue copy: the record says where the event moved, and the emitter carries the copy on.
  if (current?.payloadKept === 'queue') {
    const carried = await writeChange(table, 'UpdateItem', isConditionFailure, (now, abortSignal) =>
      table.client.send(withoutSdkRetries(new UpdateCommand(rescheduleUpdate(table, id, scope, change, now, 'queue'))), { abortSignal }),
    );
    if (carried !== undefined) {
      const old = toRecord(carried.Attributes ?? {});
      await moveLabelEntries(table, { ...old, dueAt: change.dueAt, expiresAt: change.expiresAt }, change.placement.shard);
      return { outcome: 'rescheduled', event: undefined };
    }
    current = (await readEvents(table, [id])).get(id);
  }
  // Delivered again, it cannot know whether its payload item's expiry and its label entries were moved (those writes may have failed).
  if (current?.lastChangeBy === change.by && isOpen(current.state)) {
    await keepPayloadUntil(table, current, current.expiresAt);
    await moveLabelEntries(table, current, change.placement.shard);
  }
  return { outcome: 'refused', current };
}

/**
 * A reschedule's write, for an event whose payload the table holds (placed anew), or one whose
 * payload only its delay-queue copy holds (left there: the record names that copy in
 * `carriedBy`, the first such reschedule's, so that later ones keep it).
 */
function rescheduleUpdate(
  table: EventTable,
  id: string,
  scope: ChangeScope,
  change: RescheduleChange,
  now: number,
  payloadIn: 'table' | 'queue',
) {
  const { placement } = change;
  const queued = placement.state === 'queued';
  const common = 'SET #due = :due, version = version + :one, rescheduledAt = :now, #ttl = :ttl, lastChangeBy = :by, lastChangeAt = :at';
  return {
    TableName: table.tableName,
    Key: { [TABLE.partitionKey]: id },
    UpdateExpression:
      payloadIn === 'queue'
        ? `${common}, carriedBy = if_not_exists(carriedBy, queuedBy)`
        : `${common}, #state = :state, #tenantShard = :tenantShard` +
          (queued ? ', queuedBy = :queuedBy REMOVE loadedBy' : ' REMOVE loadedBy, queuedBy'),
    ConditionExpression:
      CHANGEABLE +
      (payloadIn === 'queue'
        ? ' AND payloadKept = :queue AND attribute_exists(queuedBy)'
        : // Only a payload the table holds can be placed anew.
          ' AND (attribute_exists(payload) OR payloadKept = :apart)') +
      // Once per request, and never behind a reschedule the client published later.
      ` AND ${followsLastChangeCondition('lastChangeAt', 'lastChangeBy')}`,
    ExpressionAttributeNames: {
      '#id': TABLE.partitionKey,
      '#state': 'state',
      '#due': TABLE.dueAtKey,
      '#ttl': TABLE.ttlAttribute,
      ...(payloadIn === 'table' ? { '#tenantShard': TABLE.tenantShardKey } : {}),
    },
    ExpressionAttributeValues: {
      ...changeableValues(scope, now),
      ':due': change.dueAt,
      ':one': 1,
      ':now': now,
      ':ttl': change.expiresAt,
      ':by': change.by,
      ':at': change.publishedAt,
      ...(payloadIn === 'queue'
        ? { ':queue': 'queue' }
        : {
            ':apart': 'item',
            ':state': placement.state,
            // Its payload is stored: the loader finds it (and its sweep repairs it) under the tenant's stored family,
            // where a held event leaves its held partition.
            ':tenantShard': tenantShardKey(scope.tenant, 's', placement.shard),
            ...(queued ? { ':queuedBy': change.queuedBy } : {}),
          }),
    },
    ReturnValues: 'ALL_OLD' as const,
  };
}

/** Gives a record's label entries its due time and expiry (a failure is retried with the reschedule's input message). */
async function moveLabelEntries(table: EventTable, record: EventRecord, shard: number): Promise<void> {
  if ((record.labels ?? []).length > 0) await batchPut(table.client, table.tableName, labelEntries(record, shard));
}

/**
 * Makes a record's payload item, if it has one, last until `expiresAt` (epoch seconds): a
 * reschedule that moves the record's expiry past it must not leave the event without its
 * payload when it falls due. The write is billed for the whole item, so it is made only when
 * the record's expiry moves later, and applies only when the item's is earlier.
 */
async function keepPayloadUntil(table: EventTable, record: EventRecord, expiresAt: number): Promise<void> {
  if (record.payloadKept !== 'item') return;
  try {
    await table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { [TABLE.partitionKey]: payloadItemId(record) },
        UpdateExpression: 'SET #ttl = :ttl',
        ConditionExpression: 'attribute_exists(#id) AND #ttl < :ttl',
        ExpressionAttributeNames: { '#id': TABLE.partitionKey, '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: { ':ttl': expiresAt },
      }),
    );
  } catch (error) {
    // Kept as long already (or gone, which no expiry brings back).
    if (isConditionFailure(error)) return;
    throw transient('UpdateItem', error);
  }
}

/**
 * Writes a cancel or a reschedule, whose condition holds the change cutoff as of the write:
 * each attempt checks it against the clock when it is made, goes out once (the SDK's retries
 * would resend the old cutoff) and is abandoned after `changeWriteTimeoutMs`, so that it lands,
 * if at all, before the emitter reads the record (see SchedulerConfig.changeCutoffSeconds). A
 * failed attempt is made again, with the cutoff evaluated anew. Undefined when refused.
 */
async function writeChange<T>(
  table: EventTable,
  operation: string,
  isRefusal: (error: unknown) => boolean,
  send: (now: number, abortSignal: AbortSignal) => Promise<T>,
): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send(table.clock.now(), AbortSignal.timeout(table.changeWriteTimeoutMs));
    } catch (error) {
      if (isRefusal(error)) return undefined;
      if (attempt === CHANGE_WRITE_ATTEMPTS) throw transient(operation, error);
      await pauseBeforeRound(attempt);
    }
  }
}

/** Whether a cancel's transaction was refused by its record's condition (not by a conflict, which a retry settles). */
function isCancelledTransaction(error: unknown): boolean {
  return (error as { CancellationReasons?: { Code?: string }[] })?.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
}

function changeableValues(scope: ChangeScope, now: number): Record<string, unknown> {
  return {
    ':tenant': scope.tenant,
    ':cutoff': now + scope.cutoffMs,
    ':scheduled': EVENT_STATE.scheduled,
    ':queued': EVENT_STATE.queued,
    ':held': EVENT_STATE.held,
  };
}
