import { randomBytes } from 'node:crypto';
import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DEFAULTS } from '../config.js';
import { DynamoDbDueDirectory } from './dynamodb-due-directory.js';
import { PutCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ChangeRequest } from '../app/ports/event-store.js';
import type {
  SeriesAdvance,
  SeriesAdvanceOutcome,
  SeriesCancelOutcome,
  SeriesChangeWrite,
  SeriesCreateOutcome,
  SeriesEntry,
  SeriesStore,
} from '../app/ports/series-store.js';
import {
  type OwedOccurrences,
  SERIES_STATE,
  seriesPayloadOwner,
  specFromStored,
  storedSpec,
  type SeriesRecord,
  type SeriesState,
  type StoredSpec,
} from '../domain/series.js';
import type { SeriesRevision } from '../domain/series-changes.js';
import { withoutExpiry, writeSeriesChange } from './dynamodb-series-changes.js';
import { labelEntryId, payloadItemId, tenantShardKey } from '../domain/table-keys.js';
import { TransientError } from '../domain/reasons.js';
import { batchDelete, batchGet, batchPut } from './dynamodb-batches.js';
import { labelEntries, withStoredPayload } from './dynamodb-event-item-codec.js';
import { DynamoDbQuotaCounters } from './dynamodb-quota-counters.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

/**
 * The series' records (see series.ts), items of their own in the events' table: `kind` =
 * `series` and `seriesState` in place of an event's `state`, so no reader of events takes one
 * for an event. An active series is keyed in the tenant index's stored family at `dueAt`, where
 * the loader finds it; a completed or cancelled one leaves the index. The payload is stored once:
 * in the record when the whole fits one write unit, else in a payload item (as a stored event's).
 */

const KIND = 'series';

function isSeriesItem(item: Readonly<Record<string, unknown>>): boolean {
  return item.kind === KIND && typeof item.tenant === 'string';
}

const optionalString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function toSeries(item: Readonly<Record<string, unknown>>): SeriesRecord {
  return {
    id: String(item.id),
    tenant: String(item.tenant),
    ...(typeof item.user === 'string' ? { user: item.user } : {}),
    target: String(item.target),
    failureTopic: optionalString(item.failureTopic),
    ...(Array.isArray(item.labels) ? { labels: item.labels.map(String) } : {}),
    state: item.seriesState as SeriesState,
    spec: specFromStored(item.spec as StoredSpec),
    catchUpMs: Number(item.catchUpMs),
    cursor: { after: Number(item.cursorAfter), fired: Number(item.fired) },
    ...(Array.isArray(item.owed) ? { owed: (item.owed as Record<string, unknown>[]).map(toOwed) } : {}),
    ...(typeof item.caughtUpMinute === 'number' ? { caughtUp: { minute: item.caughtUpMinute, sent: Number(item.caughtUpSent) } } : {}),
    version: Number(item.version),
    dueAt: typeof item.dueAt === 'number' ? item.dueAt : undefined,
    payload: optionalString(item.payload),
    payloadKept: item.payloadKept === 'item' ? 'item' : 'record',
    clientId: optionalString(item.clientId),
    requestHash: String(item.requestHash),
    inputMessageId: String(item.inputMessageId),
    createdAt: Number(item.createdAt),
    cancelledBy: optionalString(item.cancelledBy),
    revision: typeof item.revision === 'number' ? item.revision : undefined,
    pausedAt: typeof item.pausedAt === 'number' ? item.pausedAt : undefined,
    lastChangeAt: typeof item.lastChangeAt === 'number' ? item.lastChangeAt : undefined,
    lastChangeBy: optionalString(item.lastChangeBy),
    payloadDigest: optionalString(item.payloadDigest),
    expiresAt: Number(item[TABLE.ttlAttribute]),
  };
}

function toOwed(item: Readonly<Record<string, unknown>>): OwedOccurrences {
  return { after: Number(item.after), fired: Number(item.fired), through: Number(item.through) };
}

/**
 * What an advance writes of the late occurrences (see materialisation): those owed, and the
 * minute's count of those sent; each removed when there is none, so a series that never falls
 * behind keeps neither.
 */
function catchUpUpdate(step: SeriesAdvance): { set: string[]; remove: string[]; values: Record<string, unknown> } {
  const owed = step.owed.length > 0;
  const { caughtUp } = step;
  return {
    set: [...(owed ? ['owed = :owed'] : []), ...(caughtUp ? ['caughtUpMinute = :minute', 'caughtUpSent = :sent'] : [])],
    remove: [...(owed ? [] : ['owed']), ...(caughtUp ? [] : ['caughtUpMinute', 'caughtUpSent'])],
    values: {
      ...(owed ? { ':owed': step.owed.map(({ after, fired, through }) => ({ after, fired, through })) } : {}),
      ...(caughtUp ? { ':minute': caughtUp.minute, ':sent': caughtUp.sent } : {}),
    },
  };
}

export class DynamoDbSeriesStore implements SeriesStore {
  private readonly counters: DynamoDbQuotaCounters;
  /** Noted before a series is keyed among its tenant's stored events at a due time, so the loader takes it (see DueDirectory). */
  private readonly dueDirectory: DynamoDbDueDirectory;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: { readonly retentionSeconds?: number } = {},
  ) {
    this.counters = new DynamoDbQuotaCounters(client, tableName);
    this.dueDirectory = new DynamoDbDueDirectory(client, tableName, options.retentionSeconds ?? DEFAULTS.retentionSeconds);
  }

  async create(entry: SeriesEntry): Promise<SeriesCreateOutcome> {
    const { series, now } = entry;
    const existing = (await this.read([series.id])).get(series.id);
    if (existing !== undefined) return { outcome: 'duplicate', existing };
    // A series is one open event of its tenant's, as long as it is active: its place taken here, unless held ahead.
    if (entry.placeHeld !== true) {
      const { taken, quota } = await this.counters.reserve(series.tenant, entry.quotas, now, 1);
      if (taken === 0) return { outcome: 'quota-exceeded', quota };
    }
    const { payload, spec, cursor, clientId, labels, ...content } = series;
    const record: Record<string, unknown> = {
      ...content,
      ...(labels === undefined || labels.length === 0 ? {} : { labels }),
      ...(clientId === undefined ? {} : { clientId }),
      kind: KIND,
      seriesState: SERIES_STATE.active,
      spec: storedSpec(spec),
      cursorAfter: cursor.after,
      fired: cursor.fired,
      version: 1,
      [TABLE.dueAtKey]: entry.dueAt,
      [TABLE.tenantShardKey]: tenantShardKey(series.tenant, 's', entry.shard),
      inputMessageId: entry.inputMessageId,
      createdAt: now,
      [TABLE.ttlAttribute]: entry.expiresAt,
    };
    for (const key of Object.keys(record)) if (record[key] === undefined) delete record[key];
    // The payload item is named by the request's digest, and written before the record names it, as a stored event's.
    // It has no expiry while the series lasts (its end deletes it): an advance does not rewrite it.
    const stored = withStoredPayload(record, payload, series, Number.NaN);
    const payloadItem = stored.payloadItem === undefined ? undefined : withoutExpiry(stored.payloadItem);
    await Promise.all([
      payloadItem === undefined ? undefined : batchPut(this.client, this.tableName, [payloadItem]),
      this.dueDirectory.note([{ tenant: series.tenant, dueAt: entry.dueAt }]),
    ]);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: stored.record,
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': TABLE.partitionKey },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('PutItem', error);
      if (entry.placeHeld !== true) await this.counters.unreserve(series.tenant, now, 1).catch(() => undefined);
      const raced = (await this.read([series.id])).get(series.id);
      if (raced === undefined) throw transient('PutItem', error);
      return { outcome: 'duplicate', existing: raced };
    }
    // So that a cancel by label finds the series: at its first occurrence, never moved, kept while the series lasts, deleted when it ends.
    if (labels !== undefined && labels.length > 0)
      await batchPut(
        this.client,
        this.tableName,
        labelEntries({ ...series, dueAt: entry.dueAt, expiresAt: Number.NaN }, entry.shard).map(withoutExpiry),
      );
    return { outcome: 'created', record: toSeries(stored.record) };
  }

  async read(ids: readonly string[]): Promise<ReadonlyMap<string, SeriesRecord>> {
    const items = await batchGet(this.client, this.tableName, ids);
    const found = new Map<string, SeriesRecord>();
    for (const [id, item] of items) if (isSeriesItem(item)) found.set(id, toSeries(item));
    return found;
  }

  async payload(series: SeriesRecord): Promise<string> {
    if (series.payload !== undefined) return series.payload;
    const id = payloadItemId(seriesPayloadOwner(series));
    return String((await batchGet(this.client, this.tableName, [id])).get(id)?.payload ?? '');
  }

  async advance(series: SeriesRecord, step: SeriesAdvance): Promise<SeriesAdvanceOutcome> {
    const completed = step.next === undefined;
    const token = randomBytes(6).toString('base64url');
    // The late occurrences' state moves in the same write as the cursor: no write of its own.
    const catchUp = catchUpUpdate(step);
    const set = [
      'cursorAfter = :after, fired = :fired, version = :next',
      completed ? 'seriesState = :completed, completedAt = :now, completedBy = :by' : 'advancedAt = :now, #due = :due',
      '#ttl = :ttl',
      ...catchUp.set,
    ];
    const remove = [...(completed ? ['#due', '#tenantShard'] : []), ...catchUp.remove];
    const update = {
      TableName: this.tableName,
      Key: { [TABLE.partitionKey]: series.id },
      UpdateExpression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
      ConditionExpression: 'seriesState = :active AND version = :version',
      ExpressionAttributeNames: {
        '#ttl': TABLE.ttlAttribute,
        '#due': TABLE.dueAtKey,
        ...(completed ? { '#tenantShard': TABLE.tenantShardKey } : {}),
      },
      ExpressionAttributeValues: {
        ':after': step.cursor.after,
        ':fired': step.cursor.fired,
        ':next': series.version + 1,
        ':now': step.now,
        ':ttl': step.expiresAt,
        ':active': SERIES_STATE.active,
        ':version': series.version,
        ...(completed ? { ':completed': SERIES_STATE.completed, ':by': token } : { ':due': step.next }),
        ...catchUp.values,
      },
      // A completion refused by its own earlier attempt (its answer lost, the SDK's retry refused) is told by its token.
      ...(completed ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
    };
    if (step.next !== undefined) await this.dueDirectory.note([{ tenant: series.tenant, dueAt: step.next }]);
    try {
      await this.client.send(new UpdateCommand(update));
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
      if (!completed || completedByIn(error) !== token) return { advanced: false };
    }
    if (!completed) return { advanced: true };
    if (step.placeFreedByCaller === true) {
      await this.dropEndedItems(series);
      return { advanced: true };
    }
    // Completed, it frees its place once its end is known written, as an event's end does: a
    // write of the counter alone, not a transaction with the record (which bills each item twice,
    // and its index entry's removal with it). Should it fail, the count errs high until reconciled.
    const freed = await this.counters.releaseOpenEvents(series.tenant, 1).then(
      () => true,
      () => false,
    );
    await this.dropEndedItems(series);
    return freed ? { advanced: true } : { advanced: true, placeKept: true };
  }

  async change(series: SeriesRecord, revision: SeriesRevision, write: SeriesChangeWrite): Promise<SeriesRecord | undefined> {
    if (revision.dueAt !== undefined) await this.dueDirectory.note([{ tenant: series.tenant, dueAt: revision.dueAt }]);
    const written = await writeSeriesChange(this.client, this.tableName, series, revision, write);
    if (written === undefined) return undefined;
    const record = toSeries(written);
    // The payload item a new payload replaced, once the record names another.
    const before = series.payloadKept === 'item' ? payloadItemId(seriesPayloadOwner(series)) : undefined;
    const after = record.payloadKept === 'item' ? payloadItemId(seriesPayloadOwner(record)) : undefined;
    if (before !== undefined && before !== after) await batchDelete(this.client, this.tableName, [before]).catch(() => undefined);
    return record;
  }

  async cancel(id: string, tenant: string, change: ChangeRequest & { readonly expiresAt: number }): Promise<SeriesCancelOutcome> {
    for (let attempt = 1; ; attempt++) {
      const current = (await this.read([id])).get(id);
      if (current === undefined || current.tenant !== tenant || current.state !== SERIES_STATE.active)
        return { outcome: 'refused', current };
      if (await this.cancelAt(current, change)) {
        this.counters.freed(tenant);
        await this.dropEndedItems(current);
        // The record as cancelled, with the cursor it had: at the version read, so no take had moved it further.
        return { outcome: 'cancelled', series: { ...current, state: SERIES_STATE.cancelled, cancelledBy: change.by } };
      }
      if (attempt === CANCEL_ATTEMPTS) throw new TransientError(`series ${id} kept moving while it was being cancelled; retrying`);
    }
  }

  /** Cancels a series at the version read; false when a take (or another cancel) moved it since. */
  private async cancelAt(current: SeriesRecord, change: ChangeRequest & { readonly expiresAt: number }): Promise<boolean> {
    const { id, tenant } = current;
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: { [TABLE.partitionKey]: id },
                UpdateExpression:
                  'SET seriesState = :cancelled, cancelledAt = :now, cancelledBy = :by, #ttl = :ttl REMOVE #due, #tenantShard',
                ConditionExpression: 'seriesState = :active AND tenant = :tenant AND version = :version',
                ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute, '#due': TABLE.dueAtKey, '#tenantShard': TABLE.tenantShardKey },
                ExpressionAttributeValues: {
                  ':cancelled': SERIES_STATE.cancelled,
                  ':now': change.publishedAt,
                  ':by': change.by,
                  ':ttl': change.expiresAt,
                  ':active': SERIES_STATE.active,
                  ':tenant': tenant,
                  ':version': current.version,
                },
              },
            },
            { Update: this.counters.releaseUpdate(tenant, 1) },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (isRefusedTransaction(error)) return false;
      throw transient('TransactWriteItems', error);
    }
  }

  /**
   * Deletes what an ended series kept without an expiry: its payload item (every occurrence's
   * copy carries its payload) and its label entries (a cancel by label has nothing left to reach).
   * Should it fail, the items stay, naming a series that has ended, which a cancel passes over.
   */
  private async dropEndedItems(series: SeriesRecord): Promise<void> {
    const ids = [
      ...(series.payloadKept === 'item' ? [payloadItemId(seriesPayloadOwner(series))] : []),
      ...(series.labels ?? []).map((label) => labelEntryId(series.id, label)),
    ];
    if (ids.length > 0) await batchDelete(this.client, this.tableName, ids).catch(() => undefined);
  }
}

/** Who completed a series, as the item a refused write returns holds it: in DynamoDB's own notation (the document client leaves errors as they come). */
function completedByIn(error: unknown): string | undefined {
  return (error as ConditionalCheckFailedException).Item?.completedBy?.S;
}

/** Attempts at a series' cancel while takes move it, before its input message is left to be retried. */
const CANCEL_ATTEMPTS = 3;

/** Whether a transaction was refused by its first item's condition (not by a conflict, which a retry settles). */
function isRefusedTransaction(error: unknown): boolean {
  return (error as { CancellationReasons?: { Code?: string }[] })?.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
}
