import type { OccurrenceOf } from '../domain/event.js';
import { DYNAMODB_WRITE_UNIT_BYTES } from '../domain/limits.js';
import { isEventState, type EventRecord, type PayloadKept } from '../domain/lifecycle.js';
import type { ReasonCode } from '../domain/reasons.js';
import { labelEntryId, labelShardKey, payloadItemId } from '../domain/table-keys.js';
import { tenantIndexKeyAt } from '../domain/tenant-index.js';
import type { NewEvent } from '../app/ports/event-store.js';
import { TABLE } from './dynamodb-table.js';

/**
 * How events are written to and read from the table. A record is small: the payload is kept
 * only for far-path events, in the record when the whole record still fits one write unit, or
 * else once in an item of its own that no state change rewrites.
 */

/** An item's size as DynamoDB bills it: each attribute's name and value (numbers counted generously). */
export function itemBytes(item: Readonly<Record<string, unknown>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    bytes += Buffer.byteLength(name) + (typeof value === 'number' ? 21 : Buffer.byteLength(String(value)));
  }
  return bytes;
}

/**
 * A new event's record, and its payload item when the payload is kept apart. A record placed in
 * the delay queue gets its tenant-index key only with `indexQueuedEvents`, and never an occurrence
 * of a series (see tenantIndexKeyAt): that key is its one write unit beyond the two of the near path.
 */
export function newEventItems(
  entry: Pick<
    NewEvent,
    'event' | 'clientId' | 'inputMessageId' | 'requestHash' | 'placement' | 'queuedBy' | 'createdBy' | 'now' | 'expiresAt'
  >,
  options: { readonly indexQueuedEvents: boolean },
): {
  readonly record: Record<string, unknown>;
  readonly payloadItem: Record<string, unknown> | undefined;
} {
  const { event, placement, now } = entry;
  const { payload, labels, ...rest } = event;
  const queued = placement.state === 'queued';
  const record: Record<string, unknown> = {
    ...rest,
    ...(labels !== undefined && labels.length > 0 ? { labels } : {}),
    payloadBytes: Buffer.byteLength(payload),
    clientId: entry.clientId,
    inputMessageId: entry.inputMessageId,
    requestHash: entry.requestHash,
    state: placement.state,
    createdAt: now,
    createdBy: entry.createdBy,
    ...(queued ? { queuedAt: now, queuedBy: entry.queuedBy } : {}),
    [TABLE.tenantShardKey]: tenantIndexKeyAt(
      'created',
      { tenant: event.tenant, shard: placement.shard, payloadIn: queued ? 'queue' : 'table', occurrence: event.series !== undefined },
      options.indexQueuedEvents,
    ),
    [TABLE.ttlAttribute]: entry.expiresAt,
  };
  for (const key of Object.keys(record)) if (record[key] === undefined) delete record[key];
  if (queued) return { record: { ...record, payloadKept: 'queue' }, payloadItem: undefined };
  return withStoredPayload(record, payload, { id: event.id, requestHash: entry.requestHash }, entry.expiresAt);
}

/**
 * A record with its payload stored: in the record when the whole still fits one write unit, or
 * else in a payload item of its own, kept until `expiresAt` (epoch seconds).
 */
export function withStoredPayload(
  record: Readonly<Record<string, unknown>>,
  payload: string,
  owner: Pick<EventRecord, 'id' | 'requestHash'>,
  expiresAt: number,
): {
  readonly record: Record<string, unknown>;
  readonly payloadItem: Record<string, unknown> | undefined;
} {
  const inline = { ...record, payloadKept: 'record', payload };
  if (itemBytes(inline) <= DYNAMODB_WRITE_UNIT_BYTES) return { record: inline, payloadItem: undefined };
  return {
    record: { ...record, payloadKept: 'item' },
    payloadItem: { [TABLE.partitionKey]: payloadItemId(owner), payload, [TABLE.ttlAttribute]: expiresAt },
  };
}

/**
 * The items that list an event under each of its labels in the tenant index, with its due time
 * and expiry: written after its record, and again whenever these change (see labelShardKey).
 */
export function labelEntries(
  record: Pick<EventRecord, 'id' | 'tenant' | 'labels' | 'dueAt' | 'expiresAt'>,
  shard: number,
): Record<string, unknown>[] {
  return (record.labels ?? []).map((label) => ({
    [TABLE.partitionKey]: labelEntryId(record.id, label),
    eventId: record.id,
    [TABLE.tenantShardKey]: labelShardKey(record.tenant, label, shard),
    [TABLE.dueAtKey]: record.dueAt,
    [TABLE.ttlAttribute]: record.expiresAt,
  }));
}

const optionalNumber = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const optionalString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function payloadKeptOf(item: Readonly<Record<string, unknown>>): PayloadKept {
  if (item.payloadKept === 'record' || item.payloadKept === 'item' || item.payloadKept === 'queue') return item.payloadKept;
  // Records written before payloads were kept apart hold theirs, whatever their path.
  return typeof item.payload === 'string' ? 'record' : 'queue';
}

/** The series an occurrence's record names, as `{ series }`; nothing for a one-off event. */
function occurrenceOf(value: unknown): { series?: OccurrenceOf } {
  const series = value as Partial<OccurrenceOf> | undefined;
  return typeof series?.id === 'string' && typeof series.occurrence === 'number'
    ? { series: { id: series.id, occurrence: series.occurrence } }
    : {};
}

/** Whether an item is an event's record (not a counter, a cursor, a notice or a payload). */
export function isEventItem(item: Readonly<Record<string, unknown>>): boolean {
  return isEventState(item.state) && typeof item.tenant === 'string';
}

export function toRecord(item: Readonly<Record<string, unknown>>): EventRecord {
  return {
    id: String(item.id),
    tenant: String(item.tenant),
    ...(typeof item.user === 'string' ? { user: item.user } : {}),
    target: String(item.target),
    payload: optionalString(item.payload),
    payloadKept: payloadKeptOf(item),
    failureTopic: optionalString(item.failureTopic),
    dueAt: Number(item.dueAt),
    version: Number(item.version ?? 1),
    ...(Array.isArray(item.labels) ? { labels: item.labels.map(String) } : {}),
    ...occurrenceOf(item.series),
    state: isEventState(item.state) ? item.state : 'scheduled',
    clientId: optionalString(item.clientId),
    labels: Array.isArray(item.labels) ? item.labels.filter((label): label is string => typeof label === 'string') : undefined,
    inputMessageId: optionalString(item.inputMessageId),
    requestHash: optionalString(item.requestHash),
    queuedBy: optionalString(item.queuedBy),
    carriedBy: optionalString(item.carriedBy),
    loadedBy: optionalString(item.loadedBy),
    createdAt: Number(item.createdAt),
    createdBy: optionalString(item.createdBy),
    queuedAt: optionalNumber(item.queuedAt),
    resentAt: optionalNumber(item.resentAt),
    loadedAt: optionalNumber(item.loadedAt),
    sweptAt: optionalNumber(item.sweptAt),
    heldAt: optionalNumber(item.heldAt),
    resumedAt: optionalNumber(item.resumedAt),
    rescheduledAt: optionalNumber(item.rescheduledAt),
    carriedAt: optionalNumber(item.carriedAt),
    carriedToTableAt: optionalNumber(item.carriedToTableAt),
    emittedAt: optionalNumber(item.emittedAt),
    failedAt: optionalNumber(item.failedAt),
    cancelledAt: optionalNumber(item.cancelledAt),
    cancelledBy: optionalString(item.cancelledBy),
    lastChangeBy: optionalString(item.lastChangeBy),
    lastChangeAt: optionalNumber(item.lastChangeAt),
    endedBy: optionalString(item.endedBy),
    reason: optionalString(item.reason) as ReasonCode | undefined,
    expiresAt: Number(item.expiresAt),
  };
}
