import { lookUpTenant } from './batch-tenants.js';
import { expiresAtFor } from '../domain/event.js';
import { EVENT_STATE, type EventRecord } from '../domain/lifecycle.js';
import type { SeriesRecord } from '../domain/series.js';
import { ID_PREFIX } from '../domain/table-keys.js';
import type { SeriesDeps } from './series.js';
import { reportSkipped } from './series.js';
import type { EventStore } from './ports/event-store.js';
import type { SeriesStore } from './ports/series-store.js';

export interface ResumeCatchUpDeps extends Pick<SeriesDeps, 'tenants' | 'delayQueue' | 'clock' | 'logger' | 'metrics'> {
  readonly config: Pick<SeriesDeps['config'], 'retentionSeconds'>;
  readonly store: Pick<EventStore, 'read' | 'cancel'>;
  readonly series: Pick<SeriesStore, 'read'>;
}

/**
 * A resume's held occurrences due longer ago than their series' catch-up window: a long pause of
 * their tenant must not fire a burst beyond that window, as an outage must not. They are not
 * sent: each is cancelled (its place freed), and they are reported once per series with their
 * count as OCCURRENCE_SKIPPED, named after the resume's chunk, so that the chunk delivered again
 * reports them once. Returns the ids left to take; a one-off held event is always among them.
 */
export async function skipPastCatchUp(deps: ResumeCatchUpDeps, ids: readonly string[], chunkId: string): Promise<readonly string[]> {
  const occurrences = ids.filter((id) => id.startsWith(ID_PREFIX.occurrence));
  if (occurrences.length === 0) return ids;
  const now = deps.clock.now();
  const records = [...(await deps.store.read(occurrences)).values()];
  const seriesOf = await deps.series.read([...new Set(records.flatMap(({ series }) => (series === undefined ? [] : [series.id])))]);
  const by = `${chunkId}#catch-up`;
  const past = records.filter((record) => {
    const series = record.series === undefined ? undefined : seriesOf.get(record.series.id);
    // Held, or cancelled by this chunk's earlier try, which may have failed before it reported them.
    const ours = record.state === EVENT_STATE.held || record.cancelledBy === by;
    return ours && series !== undefined && record.dueAt < now - series.catchUpMs;
  });
  if (past.length === 0) return ids;
  const expiresAt = expiresAtFor(now, deps.config.retentionSeconds);
  const skipped = new Map<string, number>();
  for (const record of past) {
    const outcome = await deps.store.cancel(record.id, { tenant: record.tenant, cutoffMs: 0 }, { by, publishedAt: now, expiresAt });
    // Cancelled by this chunk, now or by its earlier delivery: counted; cancelled by the client meanwhile: not this one's to report.
    if (outcome.outcome === 'cancelled' || outcome.current?.cancelledBy === by) {
      const seriesId = (record.series as NonNullable<EventRecord['series']>).id;
      skipped.set(seriesId, (skipped.get(seriesId) ?? 0) + 1);
    }
  }
  for (const [seriesId, count] of skipped) await report(deps, seriesOf.get(seriesId) as SeriesRecord, count, by, now);
  const gone = new Set(past.map(({ id }) => id));
  return ids.filter((id) => !gone.has(id));
}

async function report(deps: ResumeCatchUpDeps, series: SeriesRecord, count: number, by: string, now: number): Promise<void> {
  const tenant = await lookUpTenant(deps.tenants, series.tenant, [series.target, series.failureTopic]);
  if (tenant === undefined) return;
  deps.logger.info({ seriesId: series.id, skipped: count, chunkId: by }, 'resume: held occurrences past their catch-up window cancelled');
  await reportSkipped(deps, series, tenant, count, now, `${by}#${series.id}`);
}
