import type { EndsRecorded, Unreleased } from '../app/ports/event-store.js';
import type { EmissionEnding } from '../domain/emission.js';
import { EVENT_STATE } from '../domain/lifecycle.js';
import { attributeIs as is } from './dynamodb-conditional-writes.js';
import { readEvents, type EventTable } from './dynamodb-event-reads.js';
import { TABLE } from './dynamodb-table.js';

/** The ends of emitted and failed events (EventStore.endEmissions), and the places in their tenants' quotas those ends free. */

/** Ends events in batches, each at the version queued; says which ends were recorded and which places they release. */
export async function endEmissions(table: EventTable, ends: readonly EmissionEnding[]): Promise<EndsRecorded> {
  if (ends.length === 0) return { recorded: [], alreadyEnded: [], unknown: [], applied: [] };
  const outcomes = await table.writer.write(
    ends.map(({ event, end, expiresAt, endedBy, listedUnder }) => ({
      kind: 'update',
      id: event.id,
      set: {
        state: end.state,
        [end.state === 'emitted' ? 'emittedAt' : 'failedAt']: end.at,
        reason: end.state === 'failed' ? end.reason : undefined,
        [TABLE.ttlAttribute]: expiresAt,
        endedBy,
        // A failed event is listed whatever the setting (see tenantIndexKeyAt).
        [TABLE.tenantShardKey]: listedUnder,
      },
      condition: { op: 'and', conditions: [is('state', EVENT_STATE.queued), is('version', event.version)] },
    })),
  );
  const applied = ends.filter((_, index) => outcomes[index] === 'applied');
  const refused = ends.filter((_, index) => outcomes[index] === 'refused');
  // A refused end may be this delivery's own, applied by an attempt whose answer was lost.
  const refusedIds = refused.map(({ event }) => event.id);
  const current = await readEvents(table, refusedIds);
  const own = refused.filter(({ event, endedBy }) => current.get(event.id)?.endedBy === endedBy);
  // Only ends known to be applied here free a place (an own end found later may have freed it
  // already): a count errs high, never low.
  return {
    recorded: [...applied, ...own],
    alreadyEnded: refused.filter((ending) => !own.includes(ending)),
    unknown: ends.filter((_, index) => outcomes[index] === 'unknown'),
    applied,
  };
}

/** Frees places ends released, one counter write per tenant; returns those it could not free. */
export async function releasePlaces(table: EventTable, freed: ReadonlyMap<string, number>): Promise<readonly Unreleased[]> {
  const released = await Promise.allSettled([...freed].map(([tenant, count]) => table.counters.releaseOpenEvents(tenant, count)));
  return [...freed].flatMap(([tenant, count], index) => (released[index]?.status === 'rejected' ? [{ tenant, count }] : []));
}
