import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { delaySecondsFor } from '../domain/delay.js';
import { expiresAtFor } from '../domain/event.js';
import { SQS_MAX_DELAY_SECONDS } from '../domain/limits.js';
import { decodeLoadingChunk, type LoadingChunk } from '../domain/messages.js';
import { TransientError } from '../domain/reasons.js';
import { type FailureLog, processBatch } from './batch.js';
import { withQuickRetries } from './quick-retry.js';
import type { EventStore } from './ports/event-store.js';
import type { Clock, Logger, SchedulerMetrics } from './ports/process.js';
import type { DelayQueue } from './ports/queues.js';
import type { SeriesStore } from './ports/series-store.js';
import { type SeriesDeps, takeSeriesTogether } from './series.js';
import { skipPastCatchUp } from './series-resume.js';
import { SERIES_STATE } from '../domain/series.js';
import { isSeriesId } from '../domain/table-keys.js';

export interface LoadingDeps extends SeriesDeps {
  readonly config: SeriesDeps['config'] &
    Pick<SchedulerConfig, 'emitterLeadMs' | 'repairAfterSeconds' | 'repairDelaySeconds' | 'retentionSeconds'>;
  readonly store: SeriesDeps['store'] & Pick<EventStore, 'takeForLoading' | 'read' | 'cancel'>;
  /** The recurring series the loader hands out with stored events (their ids are series ids). */
  readonly series: SeriesDeps['series'] & Pick<SeriesStore, 'read'>;
  readonly delayQueue: Pick<DelayQueue, 'send' | 'sendNotice'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** Where the last error of each failed record is kept, for the dead-letter tools; none by default. */
  readonly failureLog?: FailureLog;
}

/**
 * Moves one chunk of stored events into the delay queue. The chunk's records are read in one
 * batch and taken by this chunk with batched conditional writes, so a second chunk with the
 * same ids sends nothing, nor does a cancelled one. The same chunk delivered again (after a
 * crash, a failed send, or a redrive from its dead-letter queue) takes its events again with a
 * new copy token and sends them again: an earlier copy is then dropped by the emitter.
 *
 * A repair chunk (from the loader's sweep) takes events still open `repairAfterSeconds` past
 * their due time, whoever took them before, and sends them with a delay of `repairDelaySeconds`.
 * An event still open then may have been published, its end handed over because its write
 * failed: that end is tried again at most `endsRetryMaxSeconds` apart, and the repaired copy
 * waits longer than that (plus a margin) before the emitter reads its record. The repair's own
 * take is a write that succeeded, so an end whose write can succeed as well is recorded before
 * that read, and the copy is dropped as already emitted instead of publishing the event again.
 *
 * A resume chunk (from a resume's job, see changes.ts) takes events held while their tenant was
 * paused, and sends them at once: they are due already, and are published late; a series'
 * occurrences older than its catch-up window are cancelled and reported instead (skipPastCatchUp).
 */
export async function loadChunks(deps: LoadingDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const response = await processBatch(records, deps, (record) => {
    const chunk = decodeLoadingChunk(record.body);
    // Tried again at once, as its redelivery would be after the visibility timeout: a new copy
    // token takes the events again, and a copy an earlier try sent is then dropped by the emitter.
    return withQuickRetries(
      deps.clock,
      () => loadChunk(deps, record, chunk),
      (error) => deps.logger.warn({ err: error, messageId: record.messageId }, 'chunk not loaded; trying it again'),
    );
  });
  deps.metrics.flush();
  return response;
}

/**
 * Takes the series among a chunk's ids (see takeSeries): each active one due within the horizon
 * (a repair: overdue by `repairAfterSeconds`, its last advance lost). A series another chunk
 * took first has moved on: its `dueAt` is then past the horizon, and nothing is done twice.
 */
async function loadSeries(deps: LoadingDeps, ids: readonly string[], repair: boolean | undefined): Promise<void> {
  if (ids.length === 0) return;
  const now = deps.clock.now();
  const bound = repair ? now - deps.config.repairAfterSeconds * 1000 : now + deps.config.nearPathWindowSeconds * 1000;
  const due = [...(await deps.series.read(ids)).values()].filter(
    (series) => series.state === SERIES_STATE.active && series.dueAt !== undefined && series.dueAt < bound,
  );
  // Each tenant's places held once for all its series' takes in the chunk, and settled once after them.
  await takeSeriesTogether(deps, due, deps.clock.now());
}

async function loadChunk(deps: LoadingDeps, record: SQSRecord, chunk: LoadingChunk): Promise<void> {
  // Held events are events: a resume's chunk names no series.
  await loadSeries(deps, chunk.ids.filter(isSeriesId), chunk.repair);
  const ids = chunk.ids.filter((id) => !isSeriesId(id));
  if (ids.length > 0) await loadEvents(deps, record, { ...chunk, ids });
}

async function loadEvents(deps: LoadingDeps, record: SQSRecord, chunk: LoadingChunk): Promise<void> {
  const { chunkId, repair, resume } = chunk;
  // A long pause must not fire a series' burst beyond its catch-up window.
  const ids = resume ? await skipPastCatchUp(deps, chunk.ids, chunkId ?? record.messageId) : chunk.ids;
  if (ids.length === 0) return;
  const queuedBy = randomUUID();
  const now = deps.clock.now();
  const events = await deps.store.takeForLoading(ids, {
    owner: chunkId ?? record.messageId,
    queuedBy,
    now,
    // Only what an SQS delay can reach: an event moved further out since the loader saw it stays stored.
    horizonMs: now + SQS_MAX_DELAY_SECONDS * 1000,
    overdueBefore: repair ? now - deps.config.repairAfterSeconds * 1000 : undefined,
    // Held while their tenant was paused: open again, kept as any open event is.
    resume: resume ? { expiresAt: expiresAtFor(now, deps.config.retentionSeconds) } : undefined,
  });
  if (repair) {
    if (events.length > 0) {
      deps.metrics.count('EventsRepaired', events.length);
      deps.logger.warn({ eventIds: events.map(({ id }) => id) }, 'events still open after their due time; sent again');
    }
  } else if (resume) {
    if (events.length > 0) deps.metrics.count('EventsResumed', events.length);
  } else if (ids.length > events.length) {
    deps.metrics.count('DuplicatesSuppressed', ids.length - events.length);
  }
  if (events.length === 0) return;
  // A resume's events are sent at once, and published as they arrive: oldest first.
  if (resume) events.sort((a, b) => a.dueAt - b.dueAt);
  const sendTime = deps.clock.now();
  const failures = await deps.delayQueue.send(
    events.map((event) => ({
      event,
      queuedBy,
      delaySeconds: repair ? deps.config.repairDelaySeconds : delaySecondsFor(event.dueAt, sendTime, deps.config.emitterLeadMs),
    })),
  );
  deps.metrics.count('EventsDelayed', events.length - failures.length);
  if (failures.length > 0) {
    throw new TransientError(`${failures.length} of ${events.length} events could not be sent to the delay queue (${failures[0]?.reason})`);
  }
  deps.logger.debug({ sent: events.length, skipped: ids.length - events.length }, 'chunk loaded');
}
