import type { SchedulerConfig } from '../config.js';
import { expiresAtFor } from '../domain/event.js';
import { EventRejectedError, REASON, TransientError } from '../domain/reasons.js';
import { SERIES_STATE, type SeriesRecord } from '../domain/series.js';
import { cancelsMaterialised, followsLastChange, revisedSeries, type SeriesChange } from '../domain/series-changes.js';
import { seriesPayloadRefusal } from '../domain/series-request.js';
import { shardOf } from '../domain/sharding.js';
import type { ChangeRequest } from './ports/event-store.js';
import type { SeriesStore } from './ports/series-store.js';
import { cancelMaterialised, type SeriesCancelDeps, type SeriesDeps, takeSeries } from './series.js';

/**
 * A client's pause, resume or replacement of one series (see series-changes.ts): the occurrences
 * it stops are cancelled first, then the record written at the version read and after the last
 * change applied; a series running after it is taken at once, as a new one is, so that its
 * occurrences within the near-path window are made from what it now is.
 */

export interface SeriesChangeDeps extends SeriesDeps {
  readonly config: SeriesDeps['config'] & SeriesCancelDeps['config'] & Pick<SchedulerConfig, 'shardCount'>;
  readonly store: SeriesDeps['store'] & SeriesCancelDeps['store'];
  readonly series: SeriesDeps['series'] & Pick<SeriesStore, 'read' | 'change'>;
}

/** What a change did: applied (or found applied by its own earlier delivery), dropped as older than the last applied, or refused. */
export type SeriesChangeOutcome = 'applied' | 'superseded' | 'none' | EventRejectedError;

/** Attempts while takes move the series, before the input message is left to be retried. */
const CHANGE_ATTEMPTS = 3;

/** Applies a change to the tenant's series `id`; `none` when the tenant has no such series. */
export async function changeSeries(
  deps: SeriesChangeDeps,
  id: string,
  tenant: string,
  change: SeriesChange,
  request: ChangeRequest,
  field: string,
): Promise<SeriesChangeOutcome> {
  for (let attempt = 1; attempt <= CHANGE_ATTEMPTS; attempt++) {
    const current = (await deps.series.read([id])).get(id);
    if (current === undefined || current.tenant !== tenant) return 'none';
    // Delivered again: its write was made; the take after it may not have been.
    if (current.lastChangeBy === request.by) return settled(deps, current);
    if (current.state !== SERIES_STATE.active)
      return new EventRejectedError(
        REASON.EVENT_ALREADY_ENDED,
        `cannot ${change.kind} series ${id}: it has already ended: ${current.state}`,
        {
          field,
          state: current.state,
        },
      );
    if (!followsLastChange(current, request)) return 'superseded';
    const refusal = change.kind === 'replace' && change.payload !== undefined ? payloadRefusal(current, change.payload) : undefined;
    if (refusal !== undefined) return refusal;
    const keptUntil = cancelsMaterialised(current, change)
      ? (await cancelMaterialised(deps, current, request)).keptUntil
      : deps.clock.now() + deps.config.changeCutoffSeconds * 1000;
    const revision = revisedSeries(current, change, { publishedAt: request.publishedAt, keptUntil });
    const written = await deps.series.change(current, revision, {
      ...request,
      shard: shardOf(id, deps.config),
      expiresAt: expiresAtFor(revision.dueAt ?? deps.clock.now(), deps.config.retentionSeconds),
    });
    if (written !== undefined) {
      deps.logger.info(
        {
          seriesId: id,
          tenant,
          change: change.kind,
          revision: written.revision,
          paused: written.pausedAt !== undefined,
          dueAt: written.dueAt,
        },
        'series changed',
      );
      return settled(deps, written);
    }
  }
  throw new TransientError(`series ${id} kept moving while it was being changed; retrying`);
}

/** A series as a change left it: taken at once when it runs (its next occurrences made from what it now is). */
async function settled(deps: SeriesChangeDeps, series: SeriesRecord): Promise<'applied'> {
  if (series.state === SERIES_STATE.active && series.pausedAt === undefined) await takeSeries(deps, series, deps.clock.now());
  return 'applied';
}

/** A new payload is sized with the series' attributes, as at ingest. */
function payloadRefusal(series: SeriesRecord, payload: string): EventRejectedError | undefined {
  return seriesPayloadRefusal(series, payload, series.dueAt ?? series.cursor.after);
}
