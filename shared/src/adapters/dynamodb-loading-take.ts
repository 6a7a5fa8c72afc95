import type { LoadingTake } from '../app/ports/event-store.js';
import type { ScheduledEvent } from '../domain/event.js';
import { EVENT_STATE, eventOf, isOpen } from '../domain/lifecycle.js';
import { TransientError } from '../domain/reasons.js';
import { attributeIs as is, type Condition, type ConditionalWrite } from './dynamodb-conditional-writes.js';
import { payloadsOf, readEvents, type EventTable } from './dynamodb-event-reads.js';
import { shardOf } from '../domain/sharding.js';
import { tenantShardKey } from '../domain/table-keys.js';
import { TABLE } from './dynamodb-table.js';

/**
 * Takes stored events for a loading message, a repair by the loader's sweep, or a resume
 * (EventStore.takeForLoading): each record marked queued by its taker in one conditional write,
 * at the version read, then returned with its payload.
 */
export async function takeForLoading(table: EventTable, ids: readonly string[], take: LoadingTake): Promise<ScheduledEvent[]> {
  const { overdueBefore, resume } = take;
  // What a first take finds: stored for the loader, or held for a resume.
  const waiting = resume === undefined ? EVENT_STATE.scheduled : EVENT_STATE.held;
  // The GSI is read eventually consistently; the records say what is still to load (reads are cheap, writes are not).
  const records = [...(await readEvents(table, ids)).values()].filter((record) =>
    overdueBefore === undefined
      ? (resume !== undefined || record.dueAt < take.horizonMs) &&
        (record.state === waiting
          ? record.loadedBy === undefined || resume !== undefined
          : record.state === EVENT_STATE.queued && record.loadedBy === take.owner)
      : isOpen(record.state) && record.state !== EVENT_STATE.held && record.dueAt < overdueBefore && record.payloadKept !== 'queue',
  );
  // A resume lists its events among their tenants' stored ones again (see DueDirectory).
  if (resume !== undefined && records.length > 0) await table.dueDirectory.note(records);
  const outcomes = await table.writer.write(
    records.map((record): ConditionalWrite => {
      const condition: Condition =
        overdueBefore === undefined
          ? {
              op: 'or',
              conditions: [
                resume === undefined
                  ? { op: 'and', conditions: [is('state', EVENT_STATE.scheduled), { op: 'missing', attribute: 'loadedBy' }] }
                  : is('state', EVENT_STATE.held),
                { op: 'and', conditions: [is('state', EVENT_STATE.queued), is('loadedBy', take.owner)] },
              ],
            }
          : // A repair takes the event only as it was read: anything since (an end, a change, a resend) wins.
            record.queuedBy === undefined
            ? { op: 'and', conditions: [is('state', record.state), { op: 'missing', attribute: 'queuedBy' }] }
            : { op: 'and', conditions: [is('state', record.state), is('queuedBy', record.queuedBy)] };
      return {
        kind: 'update',
        id: record.id,
        set: {
          state: EVENT_STATE.queued,
          // Each taker's own time: a resume, a repair or a load.
          [resume !== undefined ? 'resumedAt' : overdueBefore !== undefined ? 'sweptAt' : 'loadedAt']: take.now,
          queuedBy: take.queuedBy,
          loadedBy: take.owner,
          // Out of its held partition, which the next resume reads, to its tenant's stored ones: its payload is in its record.
          ...(resume === undefined
            ? {}
            : {
                [TABLE.ttlAttribute]: resume.expiresAt,
                [TABLE.tenantShardKey]: tenantShardKey(record.tenant, 's', shardOf(record.id, table)),
              }),
        },
        condition: { op: 'and', conditions: [is('version', record.version), condition] },
      };
    }),
  );
  if (outcomes.includes('unknown'))
    throw new TransientError(`taking ${outcomes.filter((outcome) => outcome === 'unknown').length} events did not complete`);
  const taken = records.filter((_, index) => outcomes[index] === 'applied');
  const payloads = await payloadsOf(table, taken);
  return taken.map((record) => eventOf(record, payloads.get(record.id) ?? ''));
}
