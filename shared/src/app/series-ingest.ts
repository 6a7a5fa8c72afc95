import { lookUpTenant } from './batch-tenants.js';
import { quotaExceeded } from '../domain/quotas.js';
import { EventRejectedError, REASON } from '../domain/reasons.js';
import { SERIES_STATE, type SeriesRecord } from '../domain/series.js';
import type { SeriesChange } from '../domain/series-changes.js';
import { isSeriesId, seriesId } from '../domain/table-keys.js';
import type { ChangeRequest, EventStore } from './ports/event-store.js';
import type { SeriesEntry, SeriesStore } from './ports/series-store.js';
import {
  cancelSeries,
  firstTakeOf,
  type HeldPlaces,
  holdPlaces,
  type SeriesCancelDeps,
  type SeriesDeps,
  settlePlaces,
  takeSeries,
} from './series.js';
import { changeSeries, type SeriesChangeDeps } from './series-changes.js';

/** What ingest does with a series request, a cancel naming a series, and a change aimed at one: each refusal returned for ingest to report. */

/** The fields of a series request in which another request with the same id differs from the one that created `existing`. */
function seriesFieldsDiffering(existing: SeriesRecord, entry: SeriesEntry): string[] {
  const { series } = entry;
  const sorted = (labels: readonly string[] | undefined) => JSON.stringify([...(labels ?? [])].sort());
  const differing = [
    existing.spec.expression.text !== series.spec.expression.text ? 'schedule' : undefined,
    existing.target !== series.target ? 'target' : undefined,
    (existing.failureTopic ?? null) !== (series.failureTopic ?? null) ? 'failure_topic' : undefined,
    existing.user !== series.user ? 'user' : undefined,
    sorted(existing.labels) !== sorted(series.labels) ? 'labels' : undefined,
  ].filter((field): field is string => field !== undefined);
  // The other recurring fields and the payload are not all kept as written: together, they are what differs.
  return differing.length === 0 ? ['payload', 'timezone', 'start', 'end', 'count', 'offset', 'dst', 'catch_up_seconds'] : differing;
}

/**
 * Stores a series, then takes it at once: its occurrences within the near-path window go to the
 * delay queue as events. A request delivered again finds its series and takes it again (the
 * first take may not have happened); a take that fails throws, and the input message is retried.
 */
export async function createSeries(
  deps: SeriesDeps & { readonly series: SeriesDeps['series'] & Pick<SeriesStore, 'create'> },
  entry: SeriesEntry,
): Promise<EventRejectedError | undefined> {
  const now = deps.clock.now();
  // The series' place and its first take's occurrences' held in one write (see HeldPlaces), settled after the take.
  const tenant = await lookUpTenant(deps.tenants, entry.series.tenant, [entry.series.target, entry.series.failureTopic]);
  const held =
    tenant === undefined ? undefined : await holdPlaces(deps, tenant, now, 1 + firstTakeOf(deps.config, entry.series, tenant, now));
  try {
    return await createAndTake(deps, entry, now, held);
  } finally {
    if (held !== undefined) await settlePlaces(deps, held);
  }
}

async function createAndTake(
  deps: SeriesDeps & { readonly series: SeriesDeps['series'] & Pick<SeriesStore, 'create'> },
  entry: SeriesEntry,
  now: number,
  held: HeldPlaces | undefined,
): Promise<EventRejectedError | undefined> {
  const { series } = entry;
  const placeHeld = held?.take(1) === true;
  const outcome = await deps.series.create({ ...entry, placeHeld });
  // Its place held, and not taken by a series that existed already.
  if (placeHeld && outcome.outcome !== 'created') held?.giveBack();
  if (outcome.outcome === 'quota-exceeded') return quotaExceeded(series.tenant, outcome.quota, entry.quotas);
  let record: SeriesRecord;
  if (outcome.outcome === 'created') {
    deps.metrics.count('EventsIngested');
    record = outcome.record;
  } else {
    record = outcome.existing;
    if (record.requestHash !== series.requestHash) {
      const differing = seriesFieldsDiffering(record, entry);
      return new EventRejectedError(
        REASON.IDEMPOTENCY_KEY_REUSED,
        `series ${series.id} was created by another request with the same id; this one differs in ${differing.join(', ')}; the first one stands`,
        { field: 'id', eventId: series.id, differing },
      );
    }
    deps.metrics.count('DuplicatesSuppressed');
    if (record.state !== SERIES_STATE.active) return undefined;
  }
  const taken = await takeSeries(deps, record, now, held);
  deps.logger.info(
    { seriesId: series.id, tenant: series.tenant, sent: taken.sent, inputMessageId: entry.inputMessageId },
    'series accepted',
  );
  return undefined;
}

/**
 * Cancels a series by its id: `cancelled` when it was (or this request had cancelled it
 * already); `none` when the tenant has no such series, so the request is refused as for an
 * event; a refusal when it has ended.
 */
export async function cancelSeriesById(
  deps: SeriesCancelDeps & Pick<SeriesDeps, 'logger' | 'metrics'>,
  id: string,
  tenant: string,
  change: ChangeRequest,
  field: string,
): Promise<'cancelled' | 'none' | EventRejectedError> {
  const result = await cancelSeries(deps, id, tenant, change);
  if ('cancelled' in result) {
    // Delivered again: counted by its first delivery, as a cancel of an event is.
    if (result.again) return 'cancelled';
    deps.metrics.count('EventsCancelled');
    deps.logger.info({ seriesId: id, tenant, occurrencesCancelled: result.cancelled }, 'series cancelled');
    return 'cancelled';
  }
  const current = result.refused;
  if (current === undefined || current.tenant !== tenant) return 'none';
  return new EventRejectedError(REASON.EVENT_ALREADY_ENDED, `cannot cancel series ${id}: it has already ended: ${current.state}`, {
    field,
    state: current.state,
  });
}

/** Why a reschedule with `date` naming a series is refused (a series is not moved to one date); undefined when it names none. */
export async function seriesChangeRefusal(
  deps: { readonly series: Pick<SeriesStore, 'read'> },
  id: string,
  tenant: string,
  field: string,
): Promise<EventRejectedError | undefined> {
  const current = (await deps.series.read([id])).get(id);
  if (current === undefined || current.tenant !== tenant) return undefined;
  return new EventRejectedError(
    REASON.SERIES_CHANGE_NOT_SUPPORTED,
    `${id} is a recurring series: it is not moved to one date; replace its "schedule" (or "payload"), pause, resume or cancel it`,
    { field },
  );
}

/**
 * A pause, resume or replacement of the series an id names (`s-…`, or the series of the client's
 * id or of a request's `m-` id): undefined once applied, or dropped as older than the last change
 * applied; else why it is refused. An id of a one-off event is refused as naming no series.
 */
export async function changeSeriesById(
  deps: SeriesChangeDeps & { readonly store: Pick<EventStore, 'read'> },
  eventId: string,
  tenant: string,
  change: SeriesChange,
  request: ChangeRequest,
  field: string,
): Promise<EventRejectedError | undefined> {
  const id = isSeriesId(eventId) ? eventId : seriesId(eventId);
  const outcome = await changeSeries(deps, id, tenant, change, request, field);
  if (outcome instanceof EventRejectedError) return outcome;
  if (outcome === 'superseded') {
    deps.metrics.count('DuplicatesSuppressed');
    deps.logger.info(
      { seriesId: id, tenant, change: change.kind, inputMessageId: request.by, publishedAt: request.publishedAt },
      `series ${change.kind} superseded by a change published later; dropped`,
    );
    return undefined;
  }
  if (outcome === 'applied') return undefined;
  const event = (await deps.store.read([eventId])).get(eventId);
  if (event !== undefined && event.tenant === tenant)
    return new EventRejectedError(
      REASON.INVALID_FIELD,
      `${eventId} is an event, not a series: a ${change.kind} of one event is not taken`,
      {
        field,
      },
    );
  return new EventRejectedError(REASON.EVENT_NOT_FOUND, `cannot ${change.kind} ${eventId}: the tenant has no series with that id`, {
    field,
  });
}
