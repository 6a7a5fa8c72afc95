import type { Admitted, CreateOptions, CreateOutcome, NewEvent, TenantAdmission } from '../app/ports/event-store.js';
import { createdByOtherRequest, type EventRecord } from '../domain/lifecycle.js';
import { payloadItemId } from '../domain/table-keys.js';
import { batchDelete, batchPut } from './dynamodb-batches.js';
import type { WriteOutcome } from './dynamodb-conditional-writes.js';
import { labelEntries, newEventItems } from './dynamodb-event-item-codec.js';
import { readEvents, type EventTable } from './dynamodb-event-reads.js';
import { TABLE } from './dynamodb-table.js';

/**
 * Creates of new events (EventStore.createMany): their places in the tenant's quota, their
 * records (each only if its id is new), their payload items and their label entries.
 */

/**
 * Creates events of one tenant; outcomes in the order of the entries (see EventStore.createMany).
 * With `placesHeld`, their places were taken ahead: no counter write, and none given back.
 */
export async function createEvents(table: EventTable, entries: readonly NewEvent[], options: CreateOptions = {}): Promise<CreateOutcome[]> {
  const [first] = entries;
  if (first === undefined) return [];
  const admission = { tenant: first.event.tenant, quotas: first.quotas, now: first.now, entries, controls: 0 };
  const { outcomes } = await admitEvents(table, admission, options.placesHeld === true);
  return [...outcomes];
}

/** Creates events of one tenant and counts its control requests with them (see EventStore.admit); `placesHeld`: see createEvents. */
export async function admitEvents(table: EventTable, admission: TenantAdmission, placesHeld = false): Promise<Admitted> {
  const outcomes: CreateOutcome[] = [];
  // The control requests are counted with the first pass's events, in its one counter write.
  let controls = admission.controls;
  let controlsTaken = 0;
  // A repeated id in the batch waits for a later pass, to be found a duplicate there.
  let pending = admission.entries.map((entry, index) => ({ entry, index }));
  while (pending.length > 0 || controls > 0) {
    const seen = new Set<string>();
    const distinct = pending.filter(({ entry }) => !seen.has(entry.event.id) && seen.add(entry.event.id));
    const together = distinct.map(({ entry }) => entry);
    const settled = placesHeld
      ? { outcomes: await insert(table, together, { placesHeld }), controls: 0 }
      : await createTogether(table, { ...admission, entries: together, controls });
    for (const [position, { index }] of distinct.entries()) outcomes[index] = settled.outcomes[position] as CreateOutcome;
    controlsTaken += settled.controls;
    controls = 0;
    pending = pending.filter((waiting) => !distinct.includes(waiting));
  }
  return { outcomes, controls: controlsTaken };
}

/**
 * Creates events of one tenant with distinct ids: places for all of them in one counter write
 * when they fit, else for as many as fit (the first ones), with places for its control requests
 * in the same write. The events left out are refused over quota, after one batched read that
 * finds which of them exist already: a redelivered request is never refused for a quota its
 * event already counts in.
 */
async function createTogether(table: EventTable, admission: TenantAdmission): Promise<Admitted> {
  const { entries, tenant, quotas, now } = admission;
  if (entries.length === 0 && admission.controls === 0) return { outcomes: [], controls: 0 };
  const { taken, quota, controls } = await table.counters.admit(tenant, quotas, now, {
    events: entries.length,
    controls: admission.controls,
  });
  const admitted = entries.slice(0, taken);
  const refused = entries.slice(taken);
  const [created, existing] = await Promise.all([
    insert(table, admitted),
    refused.length === 0 ? new Map<string, EventRecord>() : readEvents(table, idsOf(refused)).catch(() => undefined),
  ]);
  const outcomes = [
    ...created,
    ...refused.map(({ event }): CreateOutcome => {
      if (existing === undefined) return { outcome: 'unknown' };
      const record = existing.get(event.id);
      if (record !== undefined) return { outcome: 'duplicate', existing: record };
      return { outcome: 'quota-exceeded', quota };
    }),
  ];
  return { outcomes, controls };
}

function idsOf(entries: readonly NewEvent[]): string[] {
  return entries.map(({ event }) => event.id);
}

/** Gives back places taken for events that turned out to exist; false when the counter write failed. */
async function giveBack(table: EventTable, tenant: string, now: number, count: number): Promise<boolean> {
  return table.counters.unreserve(tenant, now, count).then(
    () => true,
    () => false,
  );
}

/**
 * Writes new events' records, each only if its id is new, with places taken for all of them.
 * Payloads kept apart are written first, so a record never names a payload that is not there.
 *
 * A refused insert is this attempt's own when its record carries the attempt's token (an
 * earlier try, whose answer was lost, wrote it): created, its place kept. Only the others are
 * duplicates, whose places are given back, and only once their records are read: what fails
 * from here fails only the entries it concerns, and gives nothing back (the count errs high).
 */
async function insert(table: EventTable, entries: readonly NewEvent[], options: CreateOptions = {}): Promise<CreateOutcome[]> {
  const [first] = entries;
  if (first === undefined) return [];
  const items = entries.map((entry) => newEventItems(entry, { indexQueuedEvents: table.indexQueuedEvents }));
  const payloadItems = items.flatMap(({ payloadItem }) => (payloadItem ? [payloadItem] : []));
  // Stored events are listed for the loader, and noted in the due directory first (see DueDirectory).
  const stored = entries.filter(({ placement }) => placement.state !== 'queued').map(({ event }) => event);
  await Promise.all([
    payloadItems.length > 0 ? batchPut(table.client, table.tableName, payloadItems) : undefined,
    stored.length > 0 ? table.dueDirectory.note(stored) : undefined,
  ]);
  const inserted = await table.writer.write(items.map(({ record }) => ({ kind: 'insert', item: record })));
  const refused = entries.filter((_, index) => inserted[index] === 'refused');
  const existing = refused.length === 0 ? new Map<string, EventRecord>() : await readEvents(table, idsOf(refused)).catch(() => undefined);
  const isDuplicate = (entry: NewEvent): boolean => {
    const record = existing?.get(entry.event.id);
    return record !== undefined && record.createdBy !== entry.createdBy;
  };
  const duplicates = refused.filter(isDuplicate).length;
  // Places held ahead are their holder's to give back (see EventStore.holdPlaces).
  const placeKept = duplicates > 0 && options.placesHeld !== true && !(await giveBack(table, first.event.tenant, first.now, duplicates));
  // A payload item written for a duplicate that its record does not name (another request's
  // content, or a record from before items were named by it) would stay until its own expiry,
  // which the request chose: it goes now. Should that fail, it expires then; nothing names it.
  const strays = entries.flatMap((entry, index) => {
    const written = items[index]?.payloadItem?.[TABLE.partitionKey];
    const record = existing?.get(entry.event.id);
    return written !== undefined && record !== undefined && isDuplicate(entry) && payloadItemId(record) !== written
      ? [String(written)]
      : [];
  });
  if (strays.length > 0) await batchDelete(table.client, table.tableName, strays).catch(() => undefined);
  const labelled = await writeLabelEntries(table, entries, inserted, existing);
  return entries.map((entry, index): CreateOutcome => {
    if (!labelled[index]) return { outcome: 'unknown' };
    if (inserted[index] === 'applied') return { outcome: 'created' };
    const record = existing?.get(entry.event.id);
    if (inserted[index] === 'unknown' || record === undefined) return { outcome: 'unknown' };
    if (!isDuplicate(entry)) return { outcome: 'created' };
    return { outcome: 'duplicate', existing: record, ...(placeKept ? { placeKept } : {}) };
  });
}

/**
 * Writes the label entries of the events whose records exist as their requests made them: just
 * created, or created by an earlier delivery of the same request (whose entries a crash or a
 * lost answer may have left unwritten: they are written again, as the record now stands). An
 * entry is never written for a record another request made, or for one not written. Whether
 * each entry's event has its label entries (false: to retry, as its outcome is unknown).
 */
async function writeLabelEntries(
  table: EventTable,
  entries: readonly NewEvent[],
  inserted: readonly WriteOutcome[],
  existing: ReadonlyMap<string, EventRecord> | undefined,
): Promise<boolean[]> {
  const labelled = entries.map((entry, index) => {
    if ((entry.event.labels ?? []).length === 0) return [];
    if (inserted[index] === 'applied') return labelEntries({ ...entry.event, expiresAt: entry.expiresAt }, entry.placement.shard);
    const record = existing?.get(entry.event.id);
    if (inserted[index] !== 'refused' || record === undefined || createdByOtherRequest(record, entry.requestHash)) return [];
    return labelEntries(record, entry.placement.shard);
  });
  if (labelled.every((items) => items.length === 0)) return entries.map(() => true);
  const written = await batchPut(table.client, table.tableName, labelled.flat()).then(
    () => true,
    () => false,
  );
  return labelled.map((items) => written || items.length === 0);
}
